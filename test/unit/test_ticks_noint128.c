/*
 * test_ticks_noint128.c - ticks.h's conversion as a compiler without
 * __int128 would build it, so test_clock.c can compare the two paths.
 *
 * test/unit/test_ticks_noint128.c
 */
#include <stdint.h>

#ifdef __SIZEOF_INT128__
#undef __SIZEOF_INT128__
#define FT_TEST_NOINT128 1
#else
#define FT_TEST_NOINT128 0
#endif

#include "ticks.h"

int			ft_test_noint128_active(void);
uint64_t	ft_test_ticks_to_ns_noint128(uint64_t mult, int64_t delta);

int
ft_test_noint128_active(void)
{
	return FT_TEST_NOINT128;
}

uint64_t
ft_test_ticks_to_ns_noint128(uint64_t mult, int64_t delta)
{
	FtTickConv	c;

	c.mult = mult;
	c.hz = 0;
	return ft_ticks_to_ns(&c, delta);
}
