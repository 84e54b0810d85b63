/* mach/mach_types.h - the Mach types the Darwin sources use, for the Mach double only.
 *
 * On the include path only when tests/test_mach_double.c builds the Darwin sources on
 * Linux (Makefile, docs/darwin.md "The Mach double"); never in the product, never on a
 * Mac. Widths follow Apple's 64-bit headers (natural_t and integer_t are 32 bits, ports
 * are names of 32 bits, addresses and sizes of the mach_vm interface 64 bits). */
#ifndef SB_MACHDOUBLE_MACH_TYPES_H
#define SB_MACHDOUBLE_MACH_TYPES_H

#include <stdint.h>

typedef int kern_return_t;
typedef unsigned int natural_t;
typedef int integer_t;
typedef natural_t mach_port_t;
typedef natural_t mach_port_name_t;
typedef natural_t mach_msg_type_number_t;
typedef mach_port_t task_t;
typedef mach_port_t thread_act_t;
typedef mach_port_t vm_map_t;
typedef mach_port_t ipc_space_t;
typedef thread_act_t *thread_act_array_t;
typedef uint64_t mach_vm_address_t;
typedef uint64_t mach_vm_size_t;
typedef uintptr_t vm_address_t;
typedef uintptr_t vm_size_t;
typedef natural_t thread_flavor_t;
typedef natural_t thread_state_flavor_t;
typedef natural_t *thread_state_t;
typedef integer_t *thread_info_t;
typedef integer_t policy_t;

#define MACH_PORT_NULL ((mach_port_t)0)

/* kern_return.h and message.h: the codes the sources test or the double returns. */
#define KERN_SUCCESS 0
#define KERN_INVALID_ADDRESS 1
#define KERN_PROTECTION_FAILURE 2
#define KERN_INVALID_ARGUMENT 4
#define KERN_FAILURE 5
#define KERN_RESOURCE_SHORTAGE 6
#define KERN_INVALID_NAME 15
#define KERN_INVALID_RIGHT 17
#define KERN_TERMINATED 37
#define MACH_SEND_INVALID_DEST 0x10000003

#endif
