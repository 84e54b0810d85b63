/* mach/mach.h - the subset of Mach the Darwin sources call, declared for the Mach double.
 *
 * Test-only (see mach_types.h): tests/machdouble/mach_double.c implements every call below
 * on Linux with the semantics Apple documents, so sampler/thread_ctl_darwin.c,
 * mach_task_darwin.c and thread_state_darwin.c compile unchanged and run in make check.
 * Only x86_64's thread state is declared: the double runs on x86_64 Linux. */
#ifndef SB_MACHDOUBLE_MACH_H
#define SB_MACHDOUBLE_MACH_H

#include <mach/mach_types.h>

#include <sys/types.h>

/* The task port of the calling task: no right is added (a macro over a variable on
 * Darwin; a call here). */
mach_port_t mach_task_self(void);
/* The calling thread's port: adds one send right, released with mach_port_deallocate. */
mach_port_t mach_thread_self(void);
/* Releases one send right (or a dead name) of name in task. */
kern_return_t mach_port_deallocate(ipc_space_t task, mach_port_name_t name);
/* The task port of process pid, with a send right (root or the debugger entitlement). */
kern_return_t task_for_pid(mach_port_t target_tport, int pid, task_t *t);

/* Every thread of target_task: a send right per thread, in an array the caller frees with
 * mach_vm_deallocate(mach_task_self(), list, count * sizeof(*list)). */
kern_return_t task_threads(task_t target_task, thread_act_array_t *act_list,
			   mach_msg_type_number_t *act_listCnt);

/* Releases [address, address + size) of target (mach/vm_map.h; the mach_vm_ form with
 * natural widths). */
kern_return_t vm_deallocate(vm_map_t target_task, vm_address_t address, vm_size_t size);

/* Suspend counts nest: the thread runs again once every thread_suspend had its
 * thread_resume. thread_suspend returns once the thread is stopped. */
kern_return_t thread_suspend(thread_act_t target_act);
kern_return_t thread_resume(thread_act_t target_act);

/* x86_64 thread state (mach/i386/_structs.h; the registers the sources read are named). */
typedef struct {
	uint64_t __rax, __rbx, __rcx, __rdx, __rdi, __rsi, __rbp, __rsp;
	uint64_t __r8, __r9, __r10, __r11, __r12, __r13, __r14, __r15;
	uint64_t __rip, __rflags, __cs, __fs, __gs;
} x86_thread_state64_t;
#define x86_THREAD_STATE64 4
#define x86_THREAD_STATE64_COUNT \
	((mach_msg_type_number_t)(sizeof(x86_thread_state64_t) / sizeof(int)))

/* Copies the thread's state of flavor into old_state; *count is its room in natural_t on
 * entry, what was written on return. */
kern_return_t thread_get_state(thread_act_t target_act, thread_state_flavor_t flavor,
			       thread_state_t old_state, mach_msg_type_number_t *old_stateCnt);

/* mach/time_value.h */
typedef struct {
	integer_t seconds;
	integer_t microseconds;
} time_value_t;

/* mach/thread_info.h */
#define THREAD_BASIC_INFO 3
typedef struct {
	time_value_t user_time;
	time_value_t system_time;
	integer_t cpu_usage;
	policy_t policy;
	integer_t run_state;
	integer_t flags;
	integer_t suspend_count;
	integer_t sleep_time;
} thread_basic_info_data_t;
#define THREAD_BASIC_INFO_COUNT \
	((mach_msg_type_number_t)(sizeof(thread_basic_info_data_t) / sizeof(natural_t)))
#define TH_STATE_RUNNING 1
#define TH_STATE_STOPPED 2

#define THREAD_IDENTIFIER_INFO 4
typedef struct {
	uint64_t thread_id;
	uint64_t thread_handle;
	uint64_t dispatch_qaddr;
} thread_identifier_info_data_t;
#define THREAD_IDENTIFIER_INFO_COUNT \
	((mach_msg_type_number_t)(sizeof(thread_identifier_info_data_t) / sizeof(natural_t)))

kern_return_t thread_info(thread_act_t target_act, thread_flavor_t flavor,
			  thread_info_t thread_info_out, mach_msg_type_number_t *thread_info_outCnt);

#endif
