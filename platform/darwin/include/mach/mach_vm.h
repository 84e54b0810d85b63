/* mach/mach_vm.h - minimal declarations for the cross build only.
 *
 * A real macOS SDK generates this header with MIG; the SDK bundled with zig 0.11 lacks it,
 * and this directory is on the include path only in `make darwin-check`. Written from
 * Apple's public documentation of the mach_vm interface: the two calls sampbench uses. */
#ifndef SB_DARWIN_MACH_VM_H
#define SB_DARWIN_MACH_VM_H

#include <mach/mach_types.h>

/* Copies size bytes at address in target_task into data (an address of ours); the number
 * of bytes copied goes to *outsize. */
kern_return_t mach_vm_read_overwrite(vm_map_t target_task, mach_vm_address_t address,
				     mach_vm_size_t size, mach_vm_address_t data,
				     mach_vm_size_t *outsize);
/* Releases [address, address + size) in target. */
kern_return_t mach_vm_deallocate(vm_map_t target, mach_vm_address_t address,
				 mach_vm_size_t size);

#endif
