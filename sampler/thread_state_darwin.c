/* thread_state_darwin.c - the registers of a suspended Mach thread (thread_state_darwin.h).
 * Compiled and linked by `make darwin-check`; run only on a Mac. */
#include "sampler/thread_state_darwin.h"

#include "platform/platform.h"

int darwin_thread_regs(thread_act_t th, struct sb_regs *regs)
{
#if defined(__x86_64__)
	x86_thread_state64_t st;
	mach_msg_type_number_t count = x86_THREAD_STATE64_COUNT;
	if (thread_get_state(th, x86_THREAD_STATE64, (thread_state_t)&st, &count) != KERN_SUCCESS)
		return -1;
	regs->pc = (uintptr_t)st.__rip;
	regs->sp = (uintptr_t)st.__rsp;
	regs->fp = (uintptr_t)st.__rbp;
	regs->lr = 0;
#elif defined(__arm64__)
	arm_thread_state64_t st;
	mach_msg_type_number_t count = ARM_THREAD_STATE64_COUNT;
	if (thread_get_state(th, ARM_THREAD_STATE64, (thread_state_t)&st, &count) != KERN_SUCCESS)
		return -1;
	/* The accessors strip pointer authentication bits (arm64e); never read __pc. lr is
	 * a return address like those on the stack: stripped the same way. */
	regs->pc = (uintptr_t)arm_thread_state64_get_pc(st);
	regs->sp = (uintptr_t)arm_thread_state64_get_sp(st);
	regs->fp = (uintptr_t)arm_thread_state64_get_fp(st);
	regs->lr = plat_strip_code_ptr((uintptr_t)arm_thread_state64_get_lr(st));
#else
#error "unsupported architecture"
#endif
	return 0;
}

int darwin_thread_gone(kern_return_t kr)
{
	return kr == KERN_TERMINATED || kr == KERN_INVALID_ARGUMENT || kr == MACH_SEND_INVALID_DEST;
}
