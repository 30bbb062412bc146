/*-------------------------------------------------------------------------
 *
 * explain_option.h
 *	  EXPLAIN (ANALYZE, CLOCK_SOURCE), PostgreSQL 18 and later.
 *
 * src/explain_option.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FASTTIME_EXPLAIN_OPTION_H
#define FASTTIME_EXPLAIN_OPTION_H

extern void ft_register_explain_option(void);

#endif							/* FASTTIME_EXPLAIN_OPTION_H */
