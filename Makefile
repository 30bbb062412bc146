# fasttime/Makefile

MODULE_big = fasttime
OBJS = $(patsubst %.c,%.o,$(sort $(wildcard src/*.c)))
PGFILEDESC = "fasttime - cheap TSC timing for EXPLAIN ANALYZE"

EXTENSION = fasttime
DATA = fasttime--1.0.sql

# regression tests need a server with shared_preload_libraries = 'fasttime'
REGRESS = $(sort $(basename $(notdir $(wildcard sql/*.sql))))
REGRESS_OPTS = --inputdir=. --load-extension=fasttime

# test builds only (make FAULT_INJECTION=1): test/fault/fault_injection.c
# and the hooks in src/ that call it (#ifdef FASTTIME_FAULT_INJECTION; the
# headers there include test/fault/fault_injection.h only then).  The
# product build has neither, which test/stage_no_faults.sh checks.
ifdef FAULT_INJECTION
OBJS += test/fault/fault_injection.o
PG_CPPFLAGS += -DFASTTIME_FAULT_INJECTION -I$(srcdir)/test/fault
endif
EXTRA_CLEAN = test/fault/fault_injection.o test/fault/fault_injection.bc

# benchmarks only (make FLOOR=1): wrappers that read no clock, to measure
# what the bookkeeping alone costs (see src/node_wrappers.c)
ifdef FLOOR
PG_CPPFLAGS += -DFASTTIME_FLOOR
endif

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# C99 loop declarations and our headers live in src/
override CPPFLAGS := -I$(srcdir)/src $(CPPFLAGS)
SHLIB_LINK += -lm

# EXPLAIN (ANALYZE, CLOCK_SOURCE) exists from PostgreSQL 18 on (see
# src/explain_option.c).  Its tests (the option, and the error bars of
# profiled node times it prints) live in sql/pg18/ and expected/pg18/,
# out of reach of the wildcard above, and are added here on 18 and later;
# pg_regress writes its result to results/pg18/, which it does not create.
ifeq ($(shell test $(MAJORVERSION) -ge 18 && echo yes),yes)
REGRESS += pg18/fasttime_explain_option pg18/fasttime_profile_error
installcheck check: results/pg18
results/pg18:
	$(MKDIR_P) $@
endif

# PostgreSQL 19 has a TSC clock of its own (timing_clock_source), which
# fasttime_status() reports in four more rows: fasttime_api runs from
# sql/pg19/fasttime_api.sql, a link to the same script, against
# expected/pg19/fasttime_api.out; pg19/fasttime_core_clock tests how
# fasttime follows the server's clock.
ifeq ($(shell test $(MAJORVERSION) -ge 19 && echo yes),yes)
REGRESS := $(patsubst fasttime_api,pg19/fasttime_api,$(REGRESS))
REGRESS += pg19/fasttime_core_clock
installcheck check: results/pg19
results/pg19:
	$(MKDIR_P) $@
endif

.PHONY: bench
bench:
	bench/run.sh

# Release version: META.json ("version", provides.fasttime.version) and
# debian/changelog (1.0.0-N) carry the same number, and default_version in
# fasttime.control is its major.minor (the SQL script version, here 1.0).
# test/check_version.sh checks that they agree.  (Not VERSION: PGXS uses
# that name for the PostgreSQL version.)
FASTTIME_VERSION = 1.0.0

# PGXN source distribution of the committed HEAD (uncommitted changes are
# not in it): fasttime-$(FASTTIME_VERSION).zip, unpacking to
# fasttime-$(FASTTIME_VERSION)/
.PHONY: dist
dist:
	git archive --format zip --prefix=fasttime-$(FASTTIME_VERSION)/ \
		-o fasttime-$(FASTTIME_VERSION).zip HEAD
