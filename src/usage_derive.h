/*-------------------------------------------------------------------------
 *
 * usage_derive.h
 *	  Which plan nodes' buffer and WAL usage equals their parent's, so
 *	  that their calls need no transitions (usage_derive.c).
 *
 * src/usage_derive.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FASTTIME_USAGE_DERIVE_H
#define FASTTIME_USAGE_DERIVE_H

#include "compat.h"

#include "nodes/execnodes.h"

extern bool ft_usage_derivable(PlanState *parent, PlanState *child);

#endif							/* FASTTIME_USAGE_DERIVE_H */
