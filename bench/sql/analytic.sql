-- bench/sql/analytic.sql: a TPC-H-like database for bench/analytic.sh,
-- generated in SQL (no dbgen).  psql variable: scale, TPC-H's scale factor
-- (default 1, as bench/analytic.sh: 6M lineitems, 1.5M orders, 150k
-- customers, 200k parts, 800k partsupps, 10k suppliers).
--
-- Every value comes from ft_ar(key, stream): hashint8 of the row's key and
-- a stream number, so the data are the same on every run and machine (on
-- one PostgreSQL major version: hashint8 is stable there).  The
-- distributions follow TPC-H's specification (clause 4.2.3) where the 22
-- queries look at them:
--   - 25 nations in 5 regions, TPC-H's names and keys;
--   - part: p_name five of TPC-H's 92 colour words (Q9 '%green%', Q20
--     'forest%'), p_mfgr/p_brand Manufacturer#1-5 / Brand#MN, p_type the
--     150 "SYLLABLE1 SYLLABLE2 SYLLABLE3" types, p_size 1-50, p_container
--     the 40 "SM CASE" ... "WRAP DRUM", p_retailprice by TPC-H's formula;
--   - partsupp: 4 suppliers per part by TPC-H's formula, so lineitem's
--     (partkey, suppkey) pairs are partsupp's;
--   - customer: c_phone's country code nation + 10 (Q22), c_acctbal
--     -999.99..9999.99, 5 market segments; one customer in three (keys
--     divisible by 3) has no orders (Q13, Q22);
--   - orders: o_orderdate uniform in 1992-01-01 .. 1998-08-02, 5
--     priorities, 1,000 × scale clerks; o_orderstatus and o_totalprice
--     derived from the order's lines as in TPC-H;
--   - lineitem: 1-7 lines per order, quantity 1-50, discount 0-0.10, tax
--     0-0.08, shipdate = orderdate + 1..121 days, commitdate + 30..90,
--     receiptdate = shipdate + 1..30, returnflag R/A before 1995-06-17
--     else N, linestatus by shipdate, 4 ship instructions, 7 ship modes;
--   - comments: random words from a 54-word list with TPC-H's 'special' and
--     'requests' (Q13: about 0.5 % of o_comment match
--     '%special%requests%'), supplier comments 'Customer ... Complaints'
--     for about 1 supplier in 2,000 (Q16).
-- Orders keys are dense (1..N) where TPC-H's are sparse; text columns are
-- text, money numeric(15,2), dates date.  Primary keys, foreign keys (the
-- planner uses them for join estimates) and indexes on the foreign keys
-- usually indexed (l_partkey, l_suppkey, o_custkey, ps_suppkey,
-- c_nationkey, s_nationkey, n_regionkey); then VACUUM FREEZE ANALYZE.
-- The data are the same on every load; the statistics are not (ANALYZE
-- reads a random sample), so a plan can differ between two loads (Q5's
-- did at scale 1: nested loops from customer instead of from supplier),
-- never within one run.  Loaded with synchronous_commit = off, 15 % of
-- orders' pages were left not all-visible by the VACUUM (index-only scans
-- then fetch from the heap): it is left on.

\set ON_ERROR_STOP 1
\if :{?scale}
\else
\set scale 1
\endif
SET client_min_messages = warning;
SET maintenance_work_mem = '512MB';
SET work_mem = '256MB';
SET max_parallel_workers_per_gather = 0;

DROP TABLE IF EXISTS lineitem, orders, partsupp, part, customer, supplier, nation, region,
	analytic_orders_base, analytic_scale CASCADE;

-- the random numbers: uniform in [0, 1) and integers in [lo, hi]
CREATE OR REPLACE FUNCTION ft_ar(k bigint, s int) RETURNS float8
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT (hashint8(k * 257 + s) & 2147483647)::float8 / 2147483648.0 $$;
CREATE OR REPLACE FUNCTION ft_ari(k bigint, s int, lo int, hi int) RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT lo + floor(ft_ar(k, s) * (hi - lo + 1))::int $$;
-- one word of a comment
CREATE OR REPLACE FUNCTION ft_word(k bigint, s int) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT ('{furiously,quickly,carefully,blithely,slyly,fluffily,ironic,final,regular,express,pending,bold,even,special,unusual,silent,careful,quick,idle,dogged,requests,deposits,accounts,packages,instructions,theodolites,foxes,ideas,pinto,beans,platelets,asymptotes,dependencies,excuses,courts,dolphins,sleep,wake,are,nag,haggle,cajole,use,boost,detect,integrate,among,above,across,against,along,after,about,according}'::text[])[1 + floor(ft_ar(k, s) * 54)::int] $$;
CREATE OR REPLACE FUNCTION ft_comment(k bigint, s int, n int) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT ft_word(k, s) || ' ' || ft_word(k, s + 1) || ' ' || ft_word(k, s + 2)
	|| CASE WHEN n > 3 THEN ' ' || ft_word(k, s + 3) || ' ' || ft_word(k, s + 4) || ' ' || ft_word(k, s + 5) ELSE '' END
	|| CASE WHEN n > 6 THEN ' ' || ft_word(k, s + 6) || ' ' || ft_word(k, s + 7) ELSE '' END $$;
-- TPC-H's supplier of part p, i in 0..3 (ns suppliers)
CREATE OR REPLACE FUNCTION ft_supp(p bigint, i int, ns int) RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT ((p + i * (ns / 4 + (p - 1) / ns)) % ns + 1)::int $$;
CREATE OR REPLACE FUNCTION ft_retailprice(p bigint) RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT ((90000 + (p / 10) % 20001 + 100 * (p % 1000)) / 100.0)::numeric(15,2) $$;
CREATE OR REPLACE FUNCTION ft_phone(k bigint, s int, nation int) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT (nation + 10)::text || '-' || ft_ari(k, s, 100, 999)::text || '-'
	|| ft_ari(k, s + 1, 100, 999)::text || '-' || ft_ari(k, s + 2, 1000, 9999)::text $$;

CREATE TABLE analytic_scale AS
SELECT :scale::numeric AS scale,
	greatest(4, round(10000 * :scale))::int AS suppliers,
	round(150000 * :scale)::int AS customers,
	round(200000 * :scale)::int AS parts,
	round(1500000 * :scale)::int AS orders,
	greatest(1, round(1000 * :scale))::int AS clerks;
SELECT suppliers AS ns, customers AS nc, parts AS np, orders AS no, clerks AS nclerk
FROM analytic_scale \gset

CREATE TABLE region(r_regionkey int PRIMARY KEY, r_name text NOT NULL, r_comment text NOT NULL);
INSERT INTO region
SELECT i - 1, n, ft_comment(i, 1, 6)
FROM unnest('{AFRICA,AMERICA,ASIA,EUROPE,MIDDLE EAST}'::text[]) WITH ORDINALITY AS t(n, i);

CREATE TABLE nation(n_nationkey int PRIMARY KEY, n_name text NOT NULL,
	n_regionkey int NOT NULL REFERENCES region, n_comment text NOT NULL);
INSERT INTO nation
SELECT k, n, r, ft_comment(k, 11, 6)
FROM (VALUES (0, 'ALGERIA', 0), (1, 'ARGENTINA', 1), (2, 'BRAZIL', 1), (3, 'CANADA', 1),
	(4, 'EGYPT', 4), (5, 'ETHIOPIA', 0), (6, 'FRANCE', 3), (7, 'GERMANY', 3), (8, 'INDIA', 2),
	(9, 'INDONESIA', 2), (10, 'IRAN', 4), (11, 'IRAQ', 4), (12, 'JAPAN', 2), (13, 'JORDAN', 4),
	(14, 'KENYA', 0), (15, 'MOROCCO', 0), (16, 'MOZAMBIQUE', 0), (17, 'PERU', 1),
	(18, 'CHINA', 2), (19, 'ROMANIA', 3), (20, 'SAUDI ARABIA', 4), (21, 'VIETNAM', 2),
	(22, 'RUSSIA', 3), (23, 'UNITED KINGDOM', 3), (24, 'UNITED STATES', 1)) AS t(k, n, r);

CREATE TABLE supplier(s_suppkey int PRIMARY KEY, s_name text NOT NULL, s_address text NOT NULL,
	s_nationkey int NOT NULL REFERENCES nation, s_phone text NOT NULL,
	s_acctbal numeric(15,2) NOT NULL, s_comment text NOT NULL);
INSERT INTO supplier
SELECT k, 'Supplier#' || lpad(k::text, 9, '0'), md5(k::text || 's'), nk, ft_phone(k, 22, nk),
	(ft_ari(k, 25, -99999, 999999) / 100.0)::numeric(15,2),
	CASE WHEN ft_ar(k, 26) < 0.0005 THEN ft_word(k, 27) || ' Customer ' || ft_word(k, 28) || ' Complaints ' || ft_comment(k, 29, 3)
		WHEN ft_ar(k, 26) < 0.001 THEN ft_word(k, 27) || ' Customer ' || ft_word(k, 28) || ' Recommends ' || ft_comment(k, 29, 3)
		ELSE ft_comment(k, 29, 6) END
FROM generate_series(1, :ns) k, LATERAL (SELECT ft_ari(k, 21, 0, 24) AS nk) n;

CREATE TABLE customer(c_custkey int PRIMARY KEY, c_name text NOT NULL, c_address text NOT NULL,
	c_nationkey int NOT NULL REFERENCES nation, c_phone text NOT NULL,
	c_acctbal numeric(15,2) NOT NULL, c_mktsegment text NOT NULL, c_comment text NOT NULL);
INSERT INTO customer
SELECT k, 'Customer#' || lpad(k::text, 9, '0'), md5(k::text || 'c'), nk, ft_phone(k, 42, nk),
	(ft_ari(k, 45, -99999, 999999) / 100.0)::numeric(15,2),
	('{AUTOMOBILE,BUILDING,FURNITURE,MACHINERY,HOUSEHOLD}'::text[])[ft_ari(k, 46, 1, 5)],
	ft_comment(k, 47, 6)
FROM generate_series(1, :nc) k, LATERAL (SELECT ft_ari(k, 41, 0, 24) AS nk) n;

CREATE TABLE part(p_partkey int PRIMARY KEY, p_name text NOT NULL, p_mfgr text NOT NULL,
	p_brand text NOT NULL, p_type text NOT NULL, p_size int NOT NULL, p_container text NOT NULL,
	p_retailprice numeric(15,2) NOT NULL, p_comment text NOT NULL);
INSERT INTO part
SELECT k,
	(SELECT string_agg(c[ft_ari(k, 60 + i, 1, 92)], ' ' ORDER BY i) FROM generate_series(1, 5) i),
	'Manufacturer#' || m, 'Brand#' || m || ft_ari(k, 67, 1, 5),
	(ARRAY['STANDARD','SMALL','MEDIUM','LARGE','ECONOMY','PROMO'])[ft_ari(k, 68, 1, 6)] || ' '
		|| (ARRAY['ANODIZED','BURNISHED','PLATED','POLISHED','BRUSHED'])[ft_ari(k, 69, 1, 5)] || ' '
		|| (ARRAY['TIN','NICKEL','BRASS','STEEL','COPPER'])[ft_ari(k, 70, 1, 5)],
	ft_ari(k, 71, 1, 50),
	(ARRAY['SM','LG','MED','JUMBO','WRAP'])[ft_ari(k, 72, 1, 5)] || ' '
		|| (ARRAY['CASE','BOX','BAG','JAR','PKG','PACK','CAN','DRUM'])[ft_ari(k, 73, 1, 8)],
	ft_retailprice(k), ft_comment(k, 74, 3)
FROM generate_series(1, :np) k,
	LATERAL (SELECT ft_ari(k, 66, 1, 5) AS m) mm,
	(SELECT '{almond,antique,aquamarine,azure,beige,bisque,black,blanched,blue,blush,brown,burlywood,burnished,chartreuse,chiffon,chocolate,coral,cornflower,cornsilk,cream,cyan,dark,deep,dim,dodger,drab,firebrick,floral,forest,frosted,gainsboro,ghost,goldenrod,green,grey,honeydew,hot,indian,ivory,khaki,lace,lavender,lawn,lemon,light,lime,linen,magenta,maroon,medium,metallic,midnight,mint,misty,moccasin,navajo,navy,olive,orange,orchid,pale,papaya,peach,peru,pink,plum,powder,puff,purple,red,rose,rosy,royal,saddle,salmon,sandy,seashell,sienna,sky,slate,smoke,snow,spring,steel,tan,thistle,tomato,turquoise,violet,wheat,white,yellow}'::text[] AS c) colours;

CREATE TABLE partsupp(ps_partkey int NOT NULL REFERENCES part, ps_suppkey int NOT NULL REFERENCES supplier,
	ps_availqty int NOT NULL, ps_supplycost numeric(15,2) NOT NULL, ps_comment text NOT NULL,
	PRIMARY KEY (ps_partkey, ps_suppkey));
INSERT INTO partsupp
SELECT p, ft_supp(p, i, :ns), ft_ari(p * 4 + i, 81, 1, 9999),
	(ft_ari(p * 4 + i, 82, 100, 100000) / 100.0)::numeric(15,2), ft_comment(p * 4 + i, 83, 6)
FROM generate_series(1, :np) p, generate_series(0, 3) i;

-- orders without the columns that come from their lines
CREATE UNLOGGED TABLE analytic_orders_base AS
SELECT k AS o_orderkey,
	-- the cust-th key not divisible by 3
	cust + (cust - 1) / 2 AS o_custkey,
	date '1992-01-01' + ft_ari(k, 102, 0, 2405 - 151) AS o_orderdate,
	(ARRAY['1-URGENT','2-HIGH','3-MEDIUM','4-NOT SPECIFIED','5-LOW'])[ft_ari(k, 103, 1, 5)] AS o_orderpriority,
	'Clerk#' || lpad(ft_ari(k, 104, 1, :nclerk)::text, 9, '0') AS o_clerk,
	ft_comment(k, 105, 6) AS o_comment,
	ft_ari(k, 101, 1, 7) AS nlines
FROM generate_series(1, :no) k,
	LATERAL (SELECT ft_ari(k, 100, 1, (:nc * 2 + 2) / 3 - 1) AS cust) c;

CREATE TABLE lineitem(l_orderkey int NOT NULL, l_partkey int NOT NULL, l_suppkey int NOT NULL,
	l_linenumber int NOT NULL, l_quantity numeric(15,2) NOT NULL, l_extendedprice numeric(15,2) NOT NULL,
	l_discount numeric(15,2) NOT NULL, l_tax numeric(15,2) NOT NULL, l_returnflag text NOT NULL,
	l_linestatus text NOT NULL, l_shipdate date NOT NULL, l_commitdate date NOT NULL,
	l_receiptdate date NOT NULL, l_shipinstruct text NOT NULL, l_shipmode text NOT NULL,
	l_comment text NOT NULL);
INSERT INTO lineitem
SELECT o_orderkey, pk, ft_supp(pk, ft_ari(lk, 122, 0, 3), :ns), ln, q, q * ft_retailprice(pk),
	ft_ari(lk, 123, 0, 10) / 100.0, ft_ari(lk, 124, 0, 8) / 100.0,
	CASE WHEN rd <= date '1995-06-17' THEN CASE WHEN ft_ar(lk, 125) < 0.5 THEN 'R' ELSE 'A' END ELSE 'N' END,
	CASE WHEN sd > date '1995-06-17' THEN 'O' ELSE 'F' END,
	sd, o_orderdate + ft_ari(lk, 126, 30, 90), rd,
	(ARRAY['DELIVER IN PERSON','COLLECT COD','NONE','TAKE BACK RETURN'])[ft_ari(lk, 127, 1, 4)],
	(ARRAY['REG AIR','AIR','RAIL','SHIP','TRUCK','MAIL','FOB'])[ft_ari(lk, 128, 1, 7)],
	ft_comment(lk, 129, 3)
FROM analytic_orders_base o, generate_series(1, o.nlines) ln,
	LATERAL (SELECT o.o_orderkey::bigint * 8 + ln AS lk) k,
	LATERAL (SELECT ft_ari(lk, 120, 1, :np) AS pk, ft_ari(lk, 121, 1, 50)::numeric(15,2) AS q,
		o.o_orderdate + ft_ari(lk, 130, 1, 121) AS sd) a,
	LATERAL (SELECT sd + ft_ari(lk, 131, 1, 30) AS rd) b;

CREATE TABLE orders(o_orderkey int PRIMARY KEY, o_custkey int NOT NULL REFERENCES customer,
	o_orderstatus text NOT NULL, o_totalprice numeric(15,2) NOT NULL, o_orderdate date NOT NULL,
	o_orderpriority text NOT NULL, o_clerk text NOT NULL, o_shippriority int NOT NULL,
	o_comment text NOT NULL);
INSERT INTO orders
SELECT o.o_orderkey, o.o_custkey,
	CASE WHEN l.nf = l.n THEN 'F' WHEN l.nf = 0 THEN 'O' ELSE 'P' END, l.total,
	o.o_orderdate, o.o_orderpriority, o.o_clerk, 0, o.o_comment
FROM analytic_orders_base o
JOIN (SELECT l_orderkey, count(*) AS n, count(*) FILTER (WHERE l_linestatus = 'F') AS nf,
		sum(l_extendedprice * (1 + l_tax) * (1 - l_discount))::numeric(15,2) AS total
	FROM lineitem GROUP BY l_orderkey) l ON l.l_orderkey = o.o_orderkey
ORDER BY o.o_orderkey;
DROP TABLE analytic_orders_base;

ALTER TABLE lineitem ADD PRIMARY KEY (l_orderkey, l_linenumber);
ALTER TABLE lineitem ADD FOREIGN KEY (l_orderkey) REFERENCES orders;
ALTER TABLE lineitem ADD FOREIGN KEY (l_partkey, l_suppkey) REFERENCES partsupp;
CREATE INDEX lineitem_partkey ON lineitem(l_partkey);
CREATE INDEX lineitem_suppkey ON lineitem(l_suppkey);
CREATE INDEX orders_custkey ON orders(o_custkey);
CREATE INDEX partsupp_suppkey ON partsupp(ps_suppkey);
CREATE INDEX customer_nationkey ON customer(c_nationkey);
CREATE INDEX supplier_nationkey ON supplier(s_nationkey);
CREATE INDEX nation_regionkey ON nation(n_regionkey);

VACUUM FREEZE ANALYZE;

SELECT rpad(c.relname, 20) AS "table",
	to_char(c.reltuples, 'FM999,999,999') AS "rows",
	pg_size_pretty(pg_table_size(c.oid)) AS "size",
	pg_size_pretty(pg_indexes_size(c.oid)) AS "indexes"
FROM pg_class c
WHERE c.relname IN ('region', 'nation', 'supplier', 'customer', 'part', 'partsupp', 'orders', 'lineitem')
ORDER BY c.reltuples;
SELECT pg_size_pretty(sum(pg_total_relation_size(c.oid))) AS "total size"
FROM pg_class c
WHERE c.relname IN ('region', 'nation', 'supplier', 'customer', 'part', 'partsupp', 'orders', 'lineitem');

-- The harness: one statement timed on the server, from before its parse to
-- after its last row (planning included; for EXPLAIN also the writing of
-- its JSON).  explain NULL: the query itself, rows discarded (PL/pgSQL
-- keeps them in SPI's tuple table first: at most Q16's 18,365 short rows
-- at scale 1); else
-- explain || query, its JSON returned.
CREATE OR REPLACE FUNCTION analytic_run(query text, explain text) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
	stmt text := coalesce(explain || ' ', '') || query;
	t0 timestamptz;
	t1 timestamptz;
	n bigint;
	plan json;
BEGIN
	IF explain IS NULL THEN
		t0 := clock_timestamp();
		EXECUTE stmt;
		t1 := clock_timestamp();
		GET DIAGNOSTICS n = ROW_COUNT;
		RETURN jsonb_build_object('ms', extract(epoch FROM t1 - t0) * 1000, 'rows', n);
	END IF;
	t0 := clock_timestamp();
	EXECUTE stmt INTO plan;
	t1 := clock_timestamp();
	RETURN jsonb_build_object('ms', extract(epoch FROM t1 - t0) * 1000, 'plan', plan);
END $$;
