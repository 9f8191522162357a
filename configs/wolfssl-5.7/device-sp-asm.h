/* SPDX-License-Identifier: Apache-2.0 */
/* device.h with wolfSSL's single-precision math in assembly for the core: sp_cortexm.c on
 * ARMv7-M and ARMv8-M mainline (Cortex-M3/M4/M7/M33/M55; on the M3, which lacks UMAAL, its
 * sp_int.h says so), sp_armthumb.c on ARMv6-M and ARMv8-M baseline (Cortex-M0/M0+/M23). The
 * core is the compiler's (-mcpu, from spec/targets.toml), so one header serves every Arm
 * target; spec/libraries.toml builds it for cortex-m only.
 *   spec/libraries.toml [device."wolfssl@5.7+sp-asm"] */
#include "device.h"

#define WOLFSSL_SP_ASM
#if defined(__ARM_ARCH_6M__) || defined(__ARM_ARCH_8M_BASE__)
#define WOLFSSL_SP_ARM_THUMB_ASM
#elif defined(__ARM_ARCH_7M__) || defined(__ARM_ARCH_7EM__) || defined(__ARM_ARCH_8M_MAIN__) || \
    defined(__ARM_ARCH_8_1M_MAIN__)
#define WOLFSSL_SP_ARM_CORTEX_M_ASM
#else
#error "wolfSSL's SP assembly is for Arm Cortex-M cores (ARMv6-M, ARMv7-M, ARMv8-M)"
#endif
