#!/usr/bin/env python3
"""Check that fasttime's documentation says what the code does.

Three kinds of check, each printing one "ok - ..." or "not ok - ..." line
per check and ending with "N passed, N failed":

  test/check_docs.py --static
      Needs no server.  The supported versions are stated once and agree:
      debian/pgversions is the list; META.json's PostgreSQL prerequisite,
      every "PostgreSQL NN-MM" range in README.md, docs/*.md, META.json,
      debian/control(.in) and fasttime.control, and the #error guards of
      src/compat.h must say the same range.  Every fasttime.NAME the
      documentation mentions is defined in src/ (a test build's
      fasttime.fault_* ones in test/fault/fault_injection.c).

  test/check_docs.py --facts-sql > facts.sql
  psql -XAt -F "<TAB>" -f facts.sql > facts.tsv     (fasttime preloaded)
  test/check_docs.py --facts facts.tsv
      What a running server says, against docs/configuration.md,
      docs/sql-functions.md and README.md:
      - the settings table of docs/configuration.md lists exactly the
        fasttime.* rows of pg_settings, each with its type, enum values or
        range and unit, default (boot_val) and context;
      - settings pg_settings hides (fasttime.leader_facts, ...) exist and
        are described in docs/configuration.md;
      - every "fasttime.NAME = VALUE" (SET, postgresql.conf, ALTER SYSTEM)
        in the docs names a setting that exists and a value it accepts; a
        commented-out "#fasttime.NAME = VALUE" line of a sample
        postgresql.conf shows the default;
      - no setting's description (pg_settings short_desc, extra_desc)
        carries a measured figure (a number of ns or microseconds);
      - docs/sql-functions.md lists every function of the extension with
        its arguments as the catalog has them and who may run it, each
        function's result columns (name and type, in order), every row
        name of fasttime_status() (rows marked "(19 and later)" only from
        PostgreSQL 19 on), and its sample outputs use those names.

  test/check_docs.py --self-test
      Builds a small tree with a correct set of documents and facts, then
      breaks one line at a time (a renamed setting, a wrong default,
      context or version range, a missing column or status row, ...) and
      checks that each is caught.

Standard library only.
"""
import glob
import json
import os
import re
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# files that are not settings but share the prefix
NOT_SETTINGS = {"so", "c", "h", "o", "bc", "control", "sql"}
SETTING_REF = re.compile(r"\bfasttime\.([a-z][a-z0-9_]*)")
RANGE_RE = re.compile(r"PostgreSQL\s+(\d{2})\s*(?:–|-|to)\s*(\d{2})\b")
PGVERSIONS_RANGE = re.compile(r"pgversions`?\s*\((\d{2})\s*(?:–|-)\s*(\d{2})\)")
TYPE_ALIASES = {
    "float8": "double precision",
    "float4": "real",
    "int8": "bigint",
    "int4": "integer",
    "int": "integer",
    "int2": "smallint",
    "bool": "boolean",
}
# what a measured figure in a description looks like
MEASURED = re.compile(r"\d+(?:\.\d+)?\s*(?:ns|µs|us|nanoseconds?|microseconds?)\b")


class Report:
    def __init__(self, out=sys.stdout):
        self.passed = 0
        self.failed = 0
        self.out = out
        self.failures = []

    def check(self, ok, what, detail=""):
        if ok:
            self.passed += 1
            print("ok - %s" % what, file=self.out)
        else:
            self.failed += 1
            self.failures.append(what)
            print("not ok - %s" % what, file=self.out)
            for line in str(detail).rstrip("\n").split("\n"):
                if line:
                    print("#   %s" % line, file=self.out)

    def end(self):
        print("%d passed, %d failed" % (self.passed, self.failed), file=self.out)
        return 1 if self.failed else 0


# ---------------------------------------------------------------------------
# reading markdown

def read(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        return f.read()


def doc_files(root):
    files = ["README.md"] if os.path.exists(os.path.join(root, "README.md")) else []
    files += sorted(os.path.relpath(p, root)
                    for p in glob.glob(os.path.join(root, "docs", "*.md")))
    return files


def fenced(lines):
    """True for each line inside (or opening/closing) a fenced block."""
    mask, fence = [], None
    for line in lines:
        m = re.match(r"^ {0,3}(`{3,}|~{3,})", line)
        if fence is None:
            mask.append(bool(m))
            if m:
                fence = m.group(1)
        else:
            mask.append(True)
            if m and line.strip().startswith(fence[0] * len(fence)) and \
                    set(line.strip()) == {fence[0]}:
                fence = None
    return mask


def code_blocks(text):
    """The fenced blocks of a markdown text, as lists of lines, with the
    three lines of prose before each."""
    lines = text.split("\n")
    blocks, cur, start, fence = [], None, 0, None
    for i, line in enumerate(lines):
        m = re.match(r"^ {0,3}(`{3,}|~{3,})", line)
        if cur is None:
            if m:
                cur, start, fence = [], i, m.group(1)
        elif m and set(line.strip()) == {fence[0]} and len(line.strip()) >= len(fence):
            blocks.append((lines[max(0, start - 3):start], cur))
            cur = None
        else:
            cur.append(line)
    return blocks


def tables(text):
    """Every pipe table outside code blocks: (heading it is under,
    header cells, rows of cells)."""
    lines = text.split("\n")
    mask = fenced(lines)
    out, heading, i = [], "", 0
    while i < len(lines):
        line = lines[i]
        if not mask[i] and re.match(r"^#{1,6}\s", line):
            heading = line.lstrip("#").strip()
        if (not mask[i] and line.lstrip().startswith("|") and i + 1 < len(lines)
                and re.match(r"^\s*\|?\s*:?-{3,}", lines[i + 1])):
            header = split_row(line)
            rows = []
            i += 2
            while i < len(lines) and lines[i].lstrip().startswith("|") and not mask[i]:
                rows.append(split_row(lines[i]))
                i += 1
            out.append((heading, header, rows))
            continue
        i += 1
    return out


def split_row(line):
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|"):
        s = s[:-1]
    cells, cur, code = [], "", False
    i = 0
    while i < len(s):
        c = s[i]
        if c == "`":
            code = not code
        if c == "\\" and i + 1 < len(s) and s[i + 1] == "|":
            cur += "|"
            i += 2
            continue
        if c == "|" and not code:
            cells.append(cur.strip())
            cur = ""
        else:
            cur += c
        i += 1
    cells.append(cur.strip())
    return cells


def code_spans(cell):
    return re.findall(r"`([^`]+)`", cell)


def prose(text):
    """The text outside fenced blocks, line by line: (line number, line)."""
    lines = text.split("\n")
    mask = fenced(lines)
    return [(i + 1, l) for i, l in enumerate(lines) if not mask[i]]


# ---------------------------------------------------------------------------
# the source

def defined_settings(root):
    """{name: file} of every fasttime.* setting src/ (and a fault build's
    test/fault/) defines."""
    found = {}
    for path in sorted(glob.glob(os.path.join(root, "src", "*.c")) +
                       glob.glob(os.path.join(root, "test", "fault", "*.c"))):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for m in re.finditer(r"DefineCustom\w+Variable\(\s*\"(fasttime\.[a-z0-9_]+)\"", text):
            found[m.group(1)] = os.path.relpath(path, root)
    return found


# ---------------------------------------------------------------------------
# --static

def supported_range(root, rep):
    try:
        vs = [int(l.split("#")[0].strip()) for l in read(root, "debian/pgversions").split("\n")
              if l.split("#")[0].strip()]
    except (OSError, ValueError) as e:
        rep.check(False, "debian/pgversions lists the supported versions", e)
        return None
    ok = vs == list(range(min(vs), max(vs) + 1)) if vs else False
    rep.check(ok, "debian/pgversions lists consecutive versions (%s)"
              % " ".join(map(str, vs)), "a gap or an unsorted list")
    return (min(vs), max(vs)) if vs else None


def check_static(root, rep):
    rng = supported_range(root, rep)
    if rng:
        lo, hi = rng
        want = "%d–%d" % (lo, hi)
        # META.json
        try:
            meta = json.loads(read(root, "META.json"))
            req = meta["prereqs"]["runtime"]["requires"]["PostgreSQL"]
        except (OSError, ValueError, KeyError) as e:
            meta, req = {}, "<%s>" % e
        want_req = ">= %d.0.0, < %d.0.0" % (lo, hi + 1)
        rep.check(req == want_req, "META.json requires PostgreSQL \"%s\"" % want_req,
                  "found \"%s\"" % req)
        # every stated range
        sources = doc_files(root) + ["META.json", "debian/control", "debian/control.in",
                                     "fasttime.control"]
        for rel in sources:
            if not os.path.exists(os.path.join(root, rel)):
                continue
            text = read(root, rel)
            bad = []
            for n, line in enumerate(text.split("\n"), 1):
                for m in list(RANGE_RE.finditer(line)) + list(PGVERSIONS_RANGE.finditer(line)):
                    if (int(m.group(1)), int(m.group(2))) != (lo, hi):
                        bad.append("line %d: \"%s\"" % (n, m.group(0)))
            rep.check(not bad, "%s: every stated range of versions is %s" % (rel, want),
                      "\n".join(bad))
        # the README states it
        readme = read(root, "README.md") if os.path.exists(os.path.join(root, "README.md")) else ""
        rep.check(re.search(r"PostgreSQL\s+%d\s*(?:–|-|to)\s*%d\b" % (lo, hi), readme) is not None,
                  "README.md states the supported versions (PostgreSQL %s)" % want)
        # the compile-time guards
        try:
            compat = read(root, "src/compat.h")
        except OSError:
            compat = ""
        low = re.search(r"#if PG_VERSION_NUM < (\d+)\s*\n#error", compat)
        high = re.search(r"#if PG_VERSION_NUM >= (\d+)\s*\n#error", compat)
        rep.check(low is not None and int(low.group(1)) == lo * 10000,
                  "src/compat.h refuses versions below %d" % lo,
                  low.group(0) if low else "no guard found")
        rep.check(high is not None and int(high.group(1)) == (hi + 1) * 10000,
                  "src/compat.h refuses versions from %d on" % (hi + 1),
                  high.group(0) if high else "no guard found")

    # every setting named in the docs is defined in src/
    defined = defined_settings(root)
    for rel in doc_files(root):
        text = read(root, rel)
        unknown = set()
        for n, line in enumerate(text.split("\n"), 1):
            for m in SETTING_REF.finditer(line):
                name = m.group(1)
                if name in NOT_SETTINGS:
                    continue
                if name.endswith("_"):          # a family: fasttime.fault_*
                    if not any(d.startswith("fasttime." + name) for d in defined):
                        unknown.add("line %d: fasttime.%s*" % (n, name))
                elif "fasttime." + name not in defined:
                    unknown.add("line %d: fasttime.%s" % (n, name))
        rep.check(not unknown, "%s: every fasttime.* setting it names is defined in src/" % rel,
                  "\n".join(sorted(unknown)))


# ---------------------------------------------------------------------------
# --facts-sql / --facts

def facts_sql(root):
    names = sorted(defined_settings(root))
    probe = ", ".join("('%s')" % n for n in names) or "(NULL)"
    return """\
-- generated by test/check_docs.py --facts-sql; run with psql -XAt -F '<TAB>'
\\set ON_ERROR_STOP 1
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fasttime;
SELECT 'version', current_setting('server_version_num');
SELECT 'guc', name, vartype, coalesce(boot_val, ''), context,
       coalesce(array_to_string(enumvals, ','), ''), coalesce(min_val, ''),
       coalesce(max_val, ''), coalesce(unit, ''),
       replace(coalesce(short_desc, '') || ' ' || coalesce(extra_desc, ''), E'\\t', ' ')
  FROM pg_settings WHERE name LIKE 'fasttime.%%' ORDER BY name;
SELECT 'defined', n FROM (VALUES %s) AS v(n)
 WHERE current_setting(n, true) IS NOT NULL ORDER BY n;
SELECT 'function', p.proname, pg_get_function_arguments(p.oid),
       pg_get_function_result(p.oid),
       CASE WHEN p.proacl IS NULL OR p.proacl::text ~ '[{,]=X' THEN 'everyone'
            ELSE array_to_string(ARRAY(
                   SELECT a.grantee::regrole::text FROM aclexplode(p.proacl) a
                    WHERE a.privilege_type = 'EXECUTE' AND a.grantee <> p.proowner
                    ORDER BY 1), ',') END
  FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
  JOIN pg_extension e ON d.refclassid = 'pg_extension'::regclass AND d.refobjid = e.oid
 WHERE e.extname = 'fasttime' AND d.deptype = 'e' ORDER BY p.proname;
SELECT 'status', name FROM fasttime_status();
""" % probe


def load_facts(path):
    f = {"version": 0, "guc": {}, "defined": set(), "function": {}, "status": []}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            cells = line.rstrip("\n").split("\t")
            kind = cells[0]
            if kind == "version":
                f["version"] = int(cells[1])
            elif kind == "guc":
                name, vartype, boot, context, enumvals, lo, hi, unit, desc = (cells[1:] + [""] * 9)[:9]
                f["guc"][name] = dict(vartype=vartype, boot=boot, context=context,
                                      enumvals=[v for v in enumvals.split(",") if v],
                                      min=lo, max=hi, unit=unit, desc=desc)
            elif kind == "defined":
                f["defined"].add(cells[1])
            elif kind == "function":
                f["function"][cells[1]] = dict(args=cells[2], result=cells[3], acl=cells[4])
            elif kind == "status":
                f["status"].append(cells[1])
    return f


def norm_type(t):
    t = t.strip().lower()
    return TYPE_ALIASES.get(t, t)


def norm_args(s):
    """'duration float8 DEFAULT 1, source text DEFAULT NULL' in the form
    pg_get_function_arguments prints: types spelled out, no casts."""
    out = []
    for part in [p.strip() for p in s.split(",") if p.strip()]:
        m = re.match(r"^(\w+)\s+(.+?)(?:\s+DEFAULT\s+(.+))?$", part, re.IGNORECASE)
        if not m:
            out.append(part)
            continue
        name, typ, default = m.group(1), norm_type(m.group(2)), m.group(3)
        item = "%s %s" % (name, typ)
        if default is not None:
            default = re.sub(r"::[\w ]+$", "", default.strip())
            item += " DEFAULT %s" % default
        out.append(item)
    return ", ".join(out)


def result_columns(result):
    m = re.match(r"^TABLE\((.*)\)$", result.strip())
    if not m:
        return None
    cols = []
    for part in m.group(1).split(","):
        name, _, typ = part.strip().partition(" ")
        cols.append((name, norm_type(typ)))
    return cols


def value_ok(g, value):
    """Whether a setting accepts VALUE, as written in a doc."""
    v = value.strip().strip("'\"")
    if g["vartype"] == "enum":
        return v.lower() in [e.lower() for e in g["enumvals"]]
    if g["vartype"] == "bool":
        return v.lower() in ("on", "off", "true", "false", "yes", "no", "1", "0")
    if g["vartype"] in ("integer", "real"):
        m = re.match(r"^(-?\d+(?:\.\d+)?)\s*([a-zµ]*)$", v)
        if not m:
            return False
        num, unit = float(m.group(1)), m.group(2)
        scale = {"": 1, "ms": 1, "s": 1000, "min": 60000}
        if g["unit"] == "ms" and unit in scale:
            num *= scale[unit]
        elif unit:
            return False
        try:
            return float(g["min"]) <= num <= float(g["max"])
        except ValueError:
            return True
    return True                 # strings: anything


def default_forms(g):
    """How the default may be written."""
    b = g["boot"]
    forms = {b}
    if g["unit"]:
        forms |= {b + g["unit"], "%s %s" % (b, g["unit"])}
    return forms


def check_settings(root, facts, rep):
    conf = read(root, "docs/configuration.md")
    gucs = {n: g for n, g in facts["guc"].items() if not n.startswith("fasttime.fault_")}
    table = None
    for heading, header, rows in tables(conf):
        if [h.lower() for h in header[:4]] == ["setting", "type", "default", "context"]:
            table = rows
            break
    rep.check(table is not None,
              "docs/configuration.md has a settings table (setting | type | default | context | ...)")
    if table is None:
        return
    documented = {}
    for row in table:
        names = code_spans(row[0])
        if names:
            documented[names[0]] = row
    missing = sorted(set(gucs) - set(documented))
    extra = sorted(set(documented) - set(gucs))
    rep.check(not missing, "docs/configuration.md: every fasttime.* row of pg_settings is in the settings table",
              "not in the table: " + ", ".join(missing))
    rep.check(not extra, "docs/configuration.md: every setting in the table is in pg_settings",
              "not in pg_settings: " + ", ".join(extra))
    for name in sorted(set(gucs) & set(documented)):
        g, row = gucs[name], documented[name] + [""] * 5
        typ, default, context = row[1], row[2], row[3]
        problems = []
        word = re.match(r"^\s*([a-z]+)", typ)
        if not word or word.group(1) != g["vartype"]:
            problems.append("type: the doc says \"%s\", pg_settings %s" % (typ, g["vartype"]))
        if g["vartype"] == "enum":
            vals = code_spans(typ)
            if vals != g["enumvals"]:
                problems.append("values: the doc says %s, pg_settings %s" % (vals, g["enumvals"]))
        if g["vartype"] in ("integer", "real"):
            m = re.search(r"(-?\d+)\s*(?:–|-|to)\s*(-?\d+)", typ)
            if not m or (m.group(1), m.group(2)) != (g["min"], g["max"]):
                problems.append("range: the doc says \"%s\", pg_settings %s–%s"
                                % (typ, g["min"], g["max"]))
            if g["unit"] and not re.search(r"\b%s\b" % re.escape(g["unit"]), typ):
                problems.append("unit: pg_settings has %s, the doc does not say it" % g["unit"])
        shown = code_spans(default)
        if g["context"] == "internal":
            if shown and shown[0] not in default_forms(g):
                problems.append("default: the doc says %s, pg_settings %s" % (shown[0], g["boot"]))
        elif not shown or shown[0] not in default_forms(g):
            problems.append("default: the doc says \"%s\", pg_settings boot_val %s%s"
                            % (default, g["boot"], g["unit"]))
        if context.strip().strip("`") != g["context"]:
            problems.append("context: the doc says \"%s\", pg_settings %s" % (context, g["context"]))
        rep.check(not problems, "docs/configuration.md: %s as pg_settings has it" % name,
                  "\n".join(problems))
        rep.check(not MEASURED.search(g["desc"]),
                  "%s: its description in pg_settings carries no measured figure" % name,
                  g["desc"])

    hidden = sorted(n for n in facts["defined"] if n not in facts["guc"]
                    and not n.startswith("fasttime.fault_"))
    for name in hidden:
        rep.check(re.search(r"^#+ .*`?%s`?" % re.escape(name), conf, re.M) is not None
                  or ("`%s`" % name) in conf,
                  "docs/configuration.md describes %s (not in pg_settings)" % name)

    # values and defaults written in the docs
    every = dict(facts["guc"])
    for rel in doc_files(root):
        text = read(root, rel)
        bad = []
        # in prose and in code: fasttime.x = v, SET fasttime.x TO v
        for n, line in enumerate(text.split("\n"), 1):
            for m in re.finditer(r"(?<!PARAMETER )\bfasttime\.([a-z0-9_]+)`?\s*(?:=|\bTO\b)\s*`?('[^']*'|[A-Za-z0-9_.]+(?: ?ms\b)?)",
                                 line):
                name = "fasttime." + m.group(1)
                if name not in every or name.startswith("fasttime.fault_"):
                    continue
                g = every[name]
                if g["context"] == "internal":
                    continue
                value = m.group(2)
                if value.upper() == "DEFAULT" or re.match(r"^[A-Z]$", value):
                    continue        # SET ... TO DEFAULT; a placeholder (X, N)
                if not value_ok(g, value):
                    bad.append("line %d: %s = %s is not a value it accepts" % (n, name, value))
        for _, block in code_blocks(text):
            for line in block:
                m = re.match(r"^\s*#\s*(fasttime\.[a-z0-9_]+)\s*=\s*('[^']*'|\S+)", line)
                if m and m.group(1) in every:
                    g = every[m.group(1)]
                    if m.group(2).strip("'") not in default_forms(g):
                        bad.append("commented-out sample line shows %s = %s, the default is %s%s"
                                   % (m.group(1), m.group(2), g["boot"], g["unit"]))
        rep.check(not bad, "%s: every fasttime.* value it writes is accepted, every commented-out sample line shows the default" % rel,
                  "\n".join(bad))


def check_functions(root, facts, rep):
    doc = read(root, "docs/sql-functions.md")
    funcs = facts["function"]
    tbls = tables(doc)
    sig_table = None
    for heading, header, rows in tbls:
        if header and header[0].lower() == "function":
            sig_table = rows
            break
    rep.check(sig_table is not None, "docs/sql-functions.md has a table of functions (function | ... )")
    if sig_table is None:
        return
    documented = {}
    for row in sig_table:
        spans = code_spans(row[0])
        if not spans:
            continue
        m = re.match(r"^(\w+)\((.*)\)$", spans[0])
        if m:
            documented[m.group(1)] = (norm_args(m.group(2)), row[-1])
    rep.check(set(documented) == set(funcs),
              "docs/sql-functions.md: the table lists exactly the extension's functions",
              "documented: %s\ninstalled: %s" % (sorted(documented), sorted(funcs)))
    for name in sorted(set(documented) & set(funcs)):
        args, who = documented[name]
        want = norm_args(funcs[name]["args"])
        rep.check(args == want, "docs/sql-functions.md: %s's arguments as the catalog has them" % name,
                  "doc: %s\ncatalog: %s" % (args, want))
        acl = funcs[name]["acl"]
        rep.check(all(r in who for r in acl.split(",") if r) and acl != "",
                  "docs/sql-functions.md: who may run %s (%s)" % (name, acl),
                  "the table says \"%s\"" % who)

    # result columns: a "| column | type |" table under each function's heading
    col_tables = {}
    for heading, header, rows in tbls:
        if [h.lower() for h in header[:2]] == ["column", "type"]:
            m = re.match(r"^`?(\w+)", heading)
            if m:
                col_tables[m.group(1)] = [(code_spans(r[0])[0] if code_spans(r[0]) else r[0],
                                           norm_type(r[1].strip("`"))) for r in rows]
    for name in sorted(funcs):
        want = result_columns(funcs[name]["result"])
        got = col_tables.get(name)
        rep.check(got == want, "docs/sql-functions.md: %s's columns, names and types in order" % name,
                  "doc: %s\ncatalog: %s" % (got, want))

    # fasttime_status() rows
    status_rows = {}
    for heading, header, rows in tbls:
        if header and header[0].lower() == "row":
            for r in rows:
                for n in code_spans(r[0]):
                    status_rows[n] = r[1] if len(r) > 1 else ""
    server = [s for s in facts["status"] if not s.startswith("fault_")]
    v19 = facts["version"] >= 190000
    required = {n for n, d in status_rows.items() if v19 or "19 and later" not in d}
    missing = [n for n in server if n not in status_rows]
    absent = sorted(required - set(server))
    rep.check(not missing, "docs/sql-functions.md: every row fasttime_status() returns is described",
              "not described: " + ", ".join(missing))
    rep.check(not absent, "docs/sql-functions.md: every row described is returned by fasttime_status() (PostgreSQL %d)"
              % (facts["version"] // 10000), "not returned: " + ", ".join(absent))
    doc_order = [n for n in status_order(doc) if n in server]
    srv_order = [n for n in server if n in status_rows]
    rep.check(doc_order == srv_order,
              "docs/sql-functions.md: the rows are described in the order fasttime_status() returns them",
              "doc: %s\nserver: %s" % (doc_order, srv_order))

    # sample outputs: psql headers name real columns, status samples real rows
    bad = []
    every_col = {c for f in funcs.values() for c, _ in (result_columns(f["result"]) or [])}
    for before, block in code_blocks(doc):
        for i in range(len(block) - 1):
            if re.match(r"^-+(\+-+)+$", block[i + 1].strip()):
                cols = [c.strip() for c in block[i].split("|")]
                if cols == ["name", "value"]:
                    for row in block[i + 2:]:
                        cell = row.split("|")[0].strip()
                        if not cell or cell.startswith("(") or cell == "...":
                            continue
                        if cell not in status_rows:
                            bad.append("status sample row %s is not a fasttime_status() row" % cell)
                elif cols and all(re.match(r"^\w+$", c) for c in cols) and \
                        not set(cols) <= every_col and \
                        any(f + "(" in l for f in funcs for l in before + block[:i]):
                    bad.append("sample header names no column of the functions: %s"
                               % ", ".join(c for c in cols if c not in every_col))
    rep.check(not bad, "docs/sql-functions.md: sample outputs use the functions' columns and status rows",
              "\n".join(bad))


def status_order(doc):
    order = []
    for heading, header, rows in tables(doc):
        if header and header[0].lower() == "row":
            for r in rows:
                order += code_spans(r[0])
    return order


def check_facts(root, facts, rep):
    rep.check(facts["version"] > 0 and bool(facts["guc"]),
              "the facts name a server version and fasttime's settings (fasttime preloaded)")
    check_settings(root, facts, rep)
    check_functions(root, facts, rep)


# ---------------------------------------------------------------------------
# --self-test

SELF_CONF = """\
# Configuration

```
shared_preload_libraries = 'fasttime'
#fasttime.clock_source = auto       # auto | tsc
#fasttime.profile_after = 20ms
```

| setting | type | default | context | what it does |
|---|---|---|---|---|
| `fasttime.clock_source` | enum: `auto`, `tsc` | `auto` | superuser | the clock |
| `fasttime.profile_after` | integer, ms, 0–3600000 | `20ms` | superuser | exact first |
| `fasttime.clock_source_status` | string, read-only | (computed) | internal | what is in effect |

`SET fasttime.clock_source = tsc` makes it the TSC.

## Internal settings

`fasttime.leader_facts`: for parallel workers.
"""

SELF_FUNCS = """\
# SQL functions

| function | what it does | who may run it |
|---|---|---|
| `ft_probe(duration float8 DEFAULT 1)` | measures | pg_monitor |
| `ft_status()` | says | everyone |

## ft_probe: what it measures

| column | type | meaning |
|---|---|---|
| `source` | text | the clock |
| `ns` | float8 | per read |

```
=# SELECT * FROM ft_probe();
 source | ns
--------+----
 tsc    | 10
```

## ft_status

| column | type | meaning |
|---|---|---|
| `name` | text | the row |
| `value` | text | its value |

| row | what it says |
|---|---|
| `setting` | the setting |
| `core_clock`, `core_unit` | the server's clock (19 and later) |

```
 name    | value
---------+------
 setting | auto
```
"""

SELF_README = """\
# demo

Runs on PostgreSQL 15–19 (`debian/pgversions` (15–19)).
Set `fasttime.clock_source = auto`.
"""

SELF_FACTS = [
    "version\t180001",
    "guc\tfasttime.clock_source\tenum\tauto\tsuperuser\tauto,tsc\t\t\t\tWhich clock.",
    "guc\tfasttime.profile_after\tinteger\t20\tsuperuser\t\t0\t3600000\tms\tExact first.",
    "guc\tfasttime.clock_source_status\tstring\tclock_gettime\tinternal\t\t\t\t\tShows it.",
    "defined\tfasttime.leader_facts",
    "function\tft_probe\tduration double precision DEFAULT 1\tTABLE(source text, ns double precision)\tpg_monitor",
    "function\tft_status\t\tTABLE(name text, value text)\teveryone",
    "status\tsetting",
]

SELF_SRC = """\
DefineCustomEnumVariable("fasttime.clock_source", ...);
DefineCustomIntVariable("fasttime.profile_after", ...);
DefineCustomStringVariable("fasttime.clock_source_status", ...);
DefineCustomStringVariable("fasttime.leader_facts", ...);
"""

SELF_TREE = {
    "README.md": SELF_README,
    "docs/configuration.md": SELF_CONF,
    "docs/sql-functions.md": SELF_FUNCS,
    "debian/pgversions": "# comment\n15\n16\n17\n18\n19\n",
    "debian/control": "Description: for PostgreSQL PGVERSION\n",
    "fasttime.control": "comment = 'x'\n",
    "META.json": json.dumps({"description": "PostgreSQL 15 to 19.",
                             "prereqs": {"runtime": {"requires":
                                                     {"PostgreSQL": ">= 15.0.0, < 20.0.0"}}}}),
    "src/compat.h": "#if PG_VERSION_NUM < 150000\n#error \"old\"\n#endif\n"
                    "#if PG_VERSION_NUM >= 200000\n#error \"new\"\n#endif\n",
    "src/fasttime.c": SELF_SRC,
    "facts.tsv": "\n".join(SELF_FACTS) + "\n",
}

# (what is broken, file, old text, new text, mode, the failing check's words)
SELF_BREAKS = [
    ("a setting renamed in the table", "docs/configuration.md",
     "| `fasttime.clock_source` |", "| `fasttime.clock_sauce` |", "facts",
     "every fasttime.* row of pg_settings is in the settings table"),
    ("a setting renamed in the prose", "docs/configuration.md",
     "`SET fasttime.clock_source = tsc`", "`SET fasttime.clock_sourc = tsc`", "static",
     "is defined in src/"),
    ("a wrong default", "docs/configuration.md",
     "| `auto` | superuser | the clock |", "| `tsc` | superuser | the clock |", "facts",
     "fasttime.clock_source as pg_settings has it"),
    ("a wrong context", "docs/configuration.md",
     "| `20ms` | superuser |", "| `20ms` | sighup |", "facts",
     "fasttime.profile_after as pg_settings has it"),
    ("a wrong range", "docs/configuration.md",
     "0–3600000", "1–3600000", "facts", "fasttime.profile_after as pg_settings has it"),
    ("an enum value that does not exist", "docs/configuration.md",
     "`SET fasttime.clock_source = tsc`", "`SET fasttime.clock_source = rdtsc`", "facts",
     "every fasttime.* value it writes is accepted"),
    ("a sample line that does not show the default", "docs/configuration.md",
     "#fasttime.profile_after = 20ms", "#fasttime.profile_after = 50ms", "facts",
     "every commented-out sample line shows the default"),
    ("a hidden setting left undescribed", "docs/configuration.md",
     "`fasttime.leader_facts`: for parallel workers.", "", "facts",
     "describes fasttime.leader_facts"),
    ("a function's argument renamed", "docs/sql-functions.md",
     "ft_probe(duration float8", "ft_probe(seconds float8", "facts",
     "ft_probe's arguments"),
    ("a column missing", "docs/sql-functions.md",
     "| `ns` | float8 | per read |\n", "", "facts", "ft_probe's columns"),
    ("a column of the wrong type", "docs/sql-functions.md",
     "| `ns` | float8 |", "| `ns` | bigint |", "facts", "ft_probe's columns"),
    ("a status row that does not exist", "docs/sql-functions.md",
     "| `setting` | the setting |", "| `settings` | the setting |", "facts",
     "every row fasttime_status() returns is described"),
    ("a 19-only row not marked so", "docs/sql-functions.md",
     "(19 and later)", "(always)", "facts",
     "every row described is returned"),
    ("a sample header with a wrong column", "docs/sql-functions.md",
     " source | ns\n", " source | ns_per_read\n", "facts",
     "sample outputs use the functions' columns"),
    ("a sample status row that does not exist", "docs/sql-functions.md",
     " setting | auto", " settings | auto", "facts", "sample outputs use the functions' columns"),
    ("who may run a function", "docs/sql-functions.md",
     "| measures | pg_monitor |", "| measures | everyone |", "facts", "who may run ft_probe"),
    ("a measured figure in a setting's description", "facts.tsv",
     "Which clock.", "Which clock; a read costs about 11 ns here.", "facts",
     "its description in pg_settings carries no measured figure"),
    ("a setting renamed in the code (the docs keep the old name)", "facts.tsv",
     "guc\tfasttime.profile_after\t", "guc\tfasttime.profile_start\t", "facts",
     "every setting in the table is in pg_settings"),
    ("README with the old range", "README.md", "PostgreSQL 15–19", "PostgreSQL 15–18", "static",
     "README.md: every stated range of versions is 15–19"),
    ("the pgversions range in prose", "README.md", "(15–19)", "(15–18)", "static",
     "README.md: every stated range of versions is 15–19"),
    ("META.json's prerequisite", "META.json", "< 20.0.0", "< 19.0.0", "static",
     "META.json requires PostgreSQL"),
    ("META.json's description", "META.json", "15 to 19", "15 to 18", "static",
     "META.json: every stated range of versions"),
    ("compat.h's upper guard", "src/compat.h", ">= 200000", ">= 190000", "static",
     "refuses versions from 20 on"),
]


def self_test():
    rep = Report()

    class Sink:
        def __init__(self):
            self.text = ""

        def write(self, s):
            self.text += s

    def run(root, mode):
        sink = Sink()
        r = Report(out=sink)
        if mode == "static":
            check_static(root, r)
        else:
            facts_path = os.path.join(root, "facts.tsv")
            check_facts(root, load_facts(facts_path), r)
        return r, sink.text

    def build(root, tree):
        for rel, content in tree.items():
            p = os.path.join(root, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w", encoding="utf-8") as f:
                f.write(content)

    with tempfile.TemporaryDirectory(prefix="check_docs.") as root:
        build(root, SELF_TREE)
        for mode in ("static", "facts"):
            r, text = run(root, mode)
            rep.check(r.failed == 0 and r.passed > 0,
                      "the correct tree passes the %s checks (%d)" % (mode, r.passed), text)
        sql = facts_sql(root)
        rep.check("'fasttime.leader_facts'" in sql and "fasttime_status()" in sql,
                  "--facts-sql probes the settings src/ defines and reads fasttime_status()", sql)
    for what, rel, old, new, mode, words in SELF_BREAKS:
        with tempfile.TemporaryDirectory(prefix="check_docs.") as root:
            tree = dict(SELF_TREE)
            if old not in tree[rel]:
                rep.check(False, "self-test case applies: %s" % what, "%r not in %s" % (old, rel))
                continue
            tree[rel] = tree[rel].replace(old, new, 1)
            build(root, tree)
            r, text = run(root, mode)
            rep.check(any(words in f for f in r.failures),
                      "caught: %s" % what,
                      "expected a failing check containing %r\n%s" % (words, text))
    return rep.end()


def main(argv):
    args = argv[1:]
    root = ROOT
    if len(args) >= 2 and args[0] == "--root":
        root = os.path.abspath(args[1])
        args = args[2:]
    if args == ["--self-test"]:
        return self_test()
    if args == ["--static"]:
        rep = Report()
        check_static(root, rep)
        return rep.end()
    if args == ["--facts-sql"]:
        sys.stdout.write(facts_sql(root))
        return 0
    if len(args) == 2 and args[0] == "--facts":
        rep = Report()
        try:
            facts = load_facts(args[1])
        except OSError as e:
            rep.check(False, "facts file readable", e)
            return rep.end()
        check_facts(root, facts, rep)
        return rep.end()
    print("usage: test/check_docs.py [--root DIR] --static | --facts-sql | --facts FILE | --self-test",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
