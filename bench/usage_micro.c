/*
 * bench/usage_micro.c: the per-call buffer bookkeeping of a node wrapper,
 * alone, outside the server (no PostgreSQL needed):
 *
 *   cc -O2 -o /tmp/usage_micro bench/usage_micro.c && /tmp/usage_micro
 *
 * A loop calls a "wrapper" around a child function that bumps a global
 * counter every 226th call (W1's Seq Scan pins a page about that often),
 * as fasttime's TIMING OFF wrappers do, in four forms:
 *   floor    rows only (TIMING OFF, BUFFERS OFF)
 *   lanes    main's bookkeeping: subtract the 16 lanes of the global
 *            counters from the node's totals at entry, add them at exit
 *   compare  transitions: compare the globals with the snapshot at entry
 *            and at exit (XOR/OR, reduced to a scalar), link the frame
 *   ptest    the same, the reduction done by VPTEST (AVX2 only)
 *   sum      the globals' lanes summed and compared with the snapshot's
 *            sum: half the loads, but equal sums mean equal counters only
 *            because every lane only grows (not fasttime's choice: not
 *            exact by construction, and wrong for 15's timespec lanes)
 * each built for AVX2 (and the first three for plain x86-64).  Prints the
 * best of 61 rounds of 2M calls, in ns per call, and the difference to the
 * floor: the minimum of many rounds is what a noisy host still gives (run
 * it a few times).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <immintrin.h>

#define LANES 16
typedef int64_t v4 __attribute__((vector_size(32), aligned(8), may_alias));
typedef int64_t v2 __attribute__((vector_size(16), aligned(8), may_alias));

typedef struct Frame
{
	double		tuplecount;
	int64_t		acc[LANES];
	struct Frame *caller;
} Frame;

int64_t		G[LANES] __attribute__((aligned(64)));	/* pgBufferUsage */
int64_t		S[LANES] __attribute__((aligned(64)));	/* the snapshot */
int64_t		Ssum;				/* its sum, for "sum" */
Frame	   *top;
static unsigned calls;

__attribute__((noinline)) static int
child(void)
{
	if (++calls % 226 == 0)
		G[0]++;
	return 1;
}

__attribute__((noinline)) static void
credit(void)
{
	for (int i = 0; i < LANES; i++)
	{
		int64_t		d = G[i] - S[i];

		S[i] = G[i];
		for (Frame *f = top; f; f = f->caller)
			f->acc[i] += d;
	}
	Ssum = 0;
	for (int i = 0; i < LANES; i++)
		Ssum += S[i];
}

#define BODY(name, attr, kind) \
__attribute__((noinline)) attr static int \
name(Frame *f) \
{ \
	int r; \
	if (kind == 1) \
		for (int i = 0; i < LANES; i += 4) \
			*(v4 *) &f->acc[i] -= *(v4 *) &G[i]; \
	if (kind >= 2) \
	{ \
		if (!EQ(kind)) credit(); \
		f->caller = top; top = f; \
	} \
	r = child(); \
	f->tuplecount += r; \
	if (kind == 1) \
		for (int i = 0; i < LANES; i += 4) \
			*(v4 *) &f->acc[i] += *(v4 *) &G[i]; \
	if (kind >= 2) \
	{ \
		if (!EQ(kind)) credit(); \
		top = f->caller; \
	} \
	return r; \
}

static inline __attribute__((always_inline)) int
eq_generic(void)
{
	v4			acc = {0};
	int64_t		d;

	for (int i = 0; i < LANES; i += 4)
		acc |= *(v4 *) &G[i] ^ *(v4 *) &S[i];
	d = acc[0] | acc[1] | acc[2] | acc[3];
	return d == 0;
}

__attribute__((target("avx2"))) static inline __attribute__((always_inline)) int
eq_ptest(void)
{
	__m256i		acc = _mm256_setzero_si256();

	for (int i = 0; i < LANES; i += 4)
		acc = _mm256_or_si256(acc, _mm256_xor_si256(_mm256_loadu_si256((void *) &G[i]),
													  _mm256_loadu_si256((void *) &S[i])));
	return _mm256_testz_si256(acc, acc);
}

__attribute__((target("avx2"))) static inline __attribute__((always_inline)) int
eq_sum(void)
{
	v4			acc = {0};

	for (int i = 0; i < LANES; i += 4)
		acc += *(v4 *) &G[i];
	return acc[0] + acc[1] + acc[2] + acc[3] == Ssum;
}

#define EQ(kind) ((kind) == 4 ? eq_sum() : (kind) == 3 ? eq_ptest_sel() : eq_generic())
/* only the AVX2 "ptest" instance reaches eq_ptest */
#define eq_ptest_sel() eq_generic()
BODY(floor_x86, , 0)
BODY(lanes_x86, , 1)
BODY(compare_x86, , 2)
BODY(floor_avx2, __attribute__((target("avx2"))), 0)
BODY(lanes_avx2, __attribute__((target("avx2"))), 1)
BODY(compare_avx2, __attribute__((target("avx2"))), 2)
#undef eq_ptest_sel
#define eq_ptest_sel() eq_ptest()
BODY(ptest_avx2, __attribute__((target("avx2"))), 3)
BODY(sum_avx2, __attribute__((target("avx2"))), 4)

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double
run(int (*fn) (Frame *), long n)
{
	Frame		f;
	double		best = 1e30;

	memset(&f, 0, sizeof(f));
	for (int r = 0; r < 61; r++)
	{
		double		t0 = now_ns();
		long		sum = 0;

		for (long i = 0; i < n; i++)
			sum += fn(&f);
		t0 = (now_ns() - t0) / n;
		if (sum != n)
			return -1;
		if (t0 < best)
			best = t0;
	}
	return best;
}

int
main(void)
{
	long		n = 2000000;
	struct
	{
		const char *name;
		int			(*fn) (Frame *);
	}			v[] = {
		{"floor x86-64", floor_x86}, {"lanes x86-64", lanes_x86},
		{"compare x86-64", compare_x86},
		{"floor avx2", floor_avx2}, {"lanes avx2", lanes_avx2},
		{"compare avx2", compare_avx2}, {"ptest avx2", ptest_avx2},
		{"sum avx2", sum_avx2},
	};
	double		floor_ns[2] = {0, 0};

	credit();
	__builtin_cpu_init();
	for (int i = 0; i < (int) (sizeof(v) / sizeof(v[0])); i++)
	{
		double		ns;

		if (i >= 3 && !__builtin_cpu_supports("avx2"))
			break;
		ns = run(v[i].fn, n);
		if (i == 0 || i == 3)
			floor_ns[i == 3] = ns;
		printf("%-16s %6.2f ns/call  (+%.2f over the floor)\n", v[i].name, ns,
			   ns - floor_ns[i >= 3]);
	}
	return 0;
}
