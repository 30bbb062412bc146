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
