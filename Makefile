# fasttime/Makefile

MODULE_big = fasttime
OBJS = $(patsubst %.c,%.o,$(sort $(wildcard src/*.c)))
PGFILEDESC = "fasttime - cheap TSC timing for EXPLAIN ANALYZE"

EXTENSION = fasttime
DATA = fasttime--1.0.sql

# regression tests need a server with shared_preload_libraries = 'fasttime'
REGRESS = $(sort $(basename $(notdir $(wildcard sql/*.sql))))
REGRESS_OPTS = --inputdir=. --load-extension=fasttime

# test builds only (make FAULT_INJECTION=1): see src/fault_injection.c
ifdef FAULT_INJECTION
PG_CPPFLAGS += -DFASTTIME_FAULT_INJECTION
endif

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# C99 loop declarations and our headers live in src/
override CPPFLAGS := -I$(srcdir)/src $(CPPFLAGS)
SHLIB_LINK += -lm

# EXPLAIN (ANALYZE, CLOCK_SOURCE) exists from PostgreSQL 18 on (see
# src/explain_option.c).  Its test lives in sql/pg18/ and expected/pg18/,
# out of reach of the wildcard above, and is added here on 18 and later;
# pg_regress writes its result to results/pg18/, which it does not create.
ifeq ($(shell test $(MAJORVERSION) -ge 18 && echo yes),yes)
REGRESS += pg18/fasttime_explain_option
installcheck check: results/pg18
results/pg18:
	$(MKDIR_P) $@
endif

.PHONY: bench
bench:
	bench/run.sh
