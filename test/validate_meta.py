#!/usr/bin/env python3
"""Validate a PGXN META.json against the PGXN Meta Spec 1.0.0.

There is no PGXN validator packaged in Debian (PGXN::Meta::Validator is
on CPAN only; pgxnclient does not validate), so this implements the
spec's rules with the standard library: the required keys and their
types, SemVer versions, version ranges in prereqs, the license strings,
the provides/resources/no_index/prereqs structures, release_status, and
that unknown keys are custom ("x_" / "X_").  Files named in provides must
exist in the distribution.

    test/validate_meta.py [META.json]

Prints one "ok"/"not ok" line per rule checked and ends with
    STAGE_RESULT meta <passed> <failed>
"""
import json
import os
import re
import sys

SEMVER = re.compile(
    r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)"
    r"(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$")
# spec 1.0.0 "Version Ranges": a version, "0", or comma-separated
# "<op> <version>" with op one of ==, !=, <, <=, >, >=
RANGE_PART = re.compile(r"^\s*(==|!=|<=|>=|<|>)?\s*(\S+)\s*$")
# "Term": at least two characters, no whitespace, slash, backslash or colon
TERM = re.compile(r"^[^\s/\\:\x00-\x1f\x7f]{2,}$")
TAG = re.compile(r"^[^/\\:\x00-\x1f\x7f]{1,255}$")
LICENSES = {
    "agpl_3", "apache_1_1", "apache_2_0", "artistic_1", "artistic_2", "bsd",
    "freebsd", "gfdl_1_2", "gfdl_1_3", "gpl_1", "gpl_2", "gpl_3",
    "lgpl_2_1", "lgpl_3_0", "mit", "mozilla_1_0", "mozilla_1_1", "openssl",
    "perl_5", "postgresql", "qpl_1_0", "ssleay", "sun", "zlib",
    "open_source", "restricted", "unrestricted", "unknown",
}
PHASES = {"configure", "build", "test", "runtime", "develop"}
RELATIONS = {"requires", "recommends", "suggests", "conflicts"}
RELEASE_STATUS = {"stable", "testing", "unstable"}
TOP_REQUIRED = ["name", "abstract", "version", "maintainer", "license",
                "provides", "meta-spec"]
TOP_OPTIONAL = ["description", "generated_by", "tags", "no_index",
                "prereqs", "release_status", "resources"]
URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:\S+$")

errors = []


def err(path, msg):
    errors.append("%s: %s" % (path, msg))


def custom(key):
    return key[:2] in ("x_", "X_")


def is_str(v, path, nonempty=True):
    if not isinstance(v, str):
        err(path, "must be a string, not %s" % type(v).__name__)
        return False
    if nonempty and not v.strip():
        err(path, "must not be empty")
        return False
    return True


def semver(v, path):
    if is_str(v, path) and not SEMVER.match(v):
        err(path, "'%s' is not a semantic version (X.Y.Z)" % v)


def version_range(v, path):
    if not is_str(v, path):
        return
    if v == "0":
        return
    for part in v.split(","):
        m = RANGE_PART.match(part)
        if not m or not SEMVER.match(m.group(2)):
            err(path, "'%s' is not a version range" % v)
            return


def only_keys(obj, allowed, path):
    for k in obj:
        if k not in allowed and not custom(k):
            err(path, "unknown key '%s'" % k)


def obj(v, path):
    if not isinstance(v, dict):
        err(path, "must be an object")
        return False
    return True


def check(meta, root):
    if not obj(meta, "META"):
        return
    for k in TOP_REQUIRED:
        if k not in meta:
            err(k, "required key missing")
    only_keys(meta, TOP_REQUIRED + TOP_OPTIONAL, "META")

    if "name" in meta and is_str(meta["name"], "name") \
            and not TERM.match(meta["name"]):
        err("name", "not a term (2+ characters, no space, /, \\ or :)")
    if "abstract" in meta:
        is_str(meta["abstract"], "abstract")
    if "description" in meta:
        is_str(meta["description"], "description")
    if "generated_by" in meta:
        is_str(meta["generated_by"], "generated_by")
    if "version" in meta:
        semver(meta["version"], "version")

    m = meta.get("maintainer")
    if isinstance(m, list):
        if not m:
            err("maintainer", "must not be an empty list")
        for i, x in enumerate(m):
            is_str(x, "maintainer[%d]" % i)
    elif m is not None:
        is_str(m, "maintainer")

    lic = meta.get("license")
    if isinstance(lic, str):
        if lic not in LICENSES:
            err("license", "'%s' is not a license string of the spec" % lic)
    elif isinstance(lic, list):
        if not lic:
            err("license", "must not be an empty list")
        for i, x in enumerate(lic):
            if x not in LICENSES:
                err("license[%d]" % i, "'%s' is not a license string" % x)
    elif isinstance(lic, dict):
        if not lic:
            err("license", "must not be an empty object")
        for k, u in lic.items():
            if is_str(u, "license.%s" % k) and not URI.match(u):
                err("license.%s" % k, "must be a URI")
    elif lic is not None:
        err("license", "must be a string, list or object")

    prov = meta.get("provides")
    if prov is not None and obj(prov, "provides"):
        if not prov:
            err("provides", "must name at least one extension")
        for ext, p in prov.items():
            path = "provides.%s" % ext
            if not TERM.match(ext):
                err(path, "extension name is not a term")
            if not obj(p, path):
                continue
            only_keys(p, ["file", "version", "abstract", "docfile"], path)
            for k in ("file", "version"):
                if k not in p:
                    err("%s.%s" % (path, k), "required key missing")
            if "version" in p:
                semver(p["version"], path + ".version")
            if "abstract" in p:
                is_str(p["abstract"], path + ".abstract")
            for k in ("file", "docfile"):
                if k in p and is_str(p[k], "%s.%s" % (path, k)) and \
                        not os.path.isfile(os.path.join(root, p[k])):
                    err("%s.%s" % (path, k), "no file '%s' in the distribution" % p[k])

    ms = meta.get("meta-spec")
    if ms is not None and obj(ms, "meta-spec"):
        only_keys(ms, ["version", "url"], "meta-spec")
        if ms.get("version") != "1.0.0":
            err("meta-spec.version", "must be \"1.0.0\"")
        if "url" in ms and is_str(ms["url"], "meta-spec.url") \
                and not URI.match(ms["url"]):
            err("meta-spec.url", "must be a URI")

    tags = meta.get("tags")
    if tags is not None:
        if not isinstance(tags, list) or not tags:
            err("tags", "must be a non-empty list")
        else:
            for i, t in enumerate(tags):
                if is_str(t, "tags[%d]" % i) and not TAG.match(t):
                    err("tags[%d]" % i, "not a tag (1-255 characters, no /, \\ or :)")

    ni = meta.get("no_index")
    if ni is not None and obj(ni, "no_index"):
        only_keys(ni, ["file", "directory"], "no_index")
        for k, v in ni.items():
            vs = v if isinstance(v, list) else [v]
            for i, x in enumerate(vs):
                is_str(x, "no_index.%s[%d]" % (k, i))

    pr = meta.get("prereqs")
    if pr is not None and obj(pr, "prereqs"):
        for phase, rels in pr.items():
            path = "prereqs.%s" % phase
            if phase not in PHASES and not custom(phase):
                err(path, "unknown phase")
            if not obj(rels, path):
                continue
            for rel, reqs in rels.items():
                rpath = "%s.%s" % (path, rel)
                if rel not in RELATIONS and not custom(rel):
                    err(rpath, "unknown relation")
                if not obj(reqs, rpath):
                    continue
                for name, rng in reqs.items():
                    version_range(rng, "%s.%s" % (rpath, name))

    rs = meta.get("release_status")
    if rs is not None and rs not in RELEASE_STATUS:
        err("release_status", "must be one of %s" % ", ".join(sorted(RELEASE_STATUS)))

    res = meta.get("resources")
    if res is not None and obj(res, "resources"):
        only_keys(res, ["homepage", "bugtracker", "repository"], "resources")
        if "homepage" in res and is_str(res["homepage"], "resources.homepage") \
                and not URI.match(res["homepage"]):
            err("resources.homepage", "must be a URI")
        for k, allowed in (("bugtracker", ["web", "mailto"]),
                           ("repository", ["url", "web", "type"])):
            if k not in res or not obj(res[k], "resources." + k):
                continue
            only_keys(res[k], allowed, "resources." + k)
            if not res[k]:
                err("resources." + k, "must not be empty")
            for f, v in res[k].items():
                p = "resources.%s.%s" % (k, f)
                if not is_str(v, p):
                    continue
                if f == "mailto" and not re.match(r"^[^@\s]+@[^@\s]+$", v):
                    err(p, "must be an email address")
                elif f in ("web", "url") and not URI.match(v):
                    err(p, "must be a URI")
                elif f == "type" and v != v.lower():
                    err(p, "must be lower case")


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "META.json"
    try:
        with open(path, encoding="utf-8") as f:
            meta = json.load(f)
    except (OSError, ValueError) as e:
        print("not ok 1 - %s is JSON: %s" % (path, e))
        print("STAGE_RESULT meta 0 1")
        return 1
    print("ok 1 - %s is JSON" % path)
    check(meta, os.path.dirname(os.path.abspath(path)))
    if errors:
        print("not ok 2 - %s follows the PGXN Meta Spec 1.0.0" % path)
        for e in errors:
            print("#   " + e)
        print("STAGE_RESULT meta 1 1")
        return 1
    print("ok 2 - %s follows the PGXN Meta Spec 1.0.0" % path)
    print("STAGE_RESULT meta 2 0")
    return 0


if __name__ == "__main__":
    sys.exit(main())
