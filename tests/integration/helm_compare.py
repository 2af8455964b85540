#!/usr/bin/env python3
"""The chart's rendered objects against the reviewed manifests.

    helm_compare.py RENDERED.yaml FULLNAME REVIEWED.yaml...

RENDERED.yaml is `helm template` output; each reviewed manifest's object must
be rendered, and the chart must render nothing else. The reviewed objects are
named gate-proxy, gate-proxy-config or gate-proxy-scale-config; the chart's
FULLNAME and FULLNAME-config. Compared: everything but metadata, plus the
names; labels and annotations of the reviewed object must be among the
rendered ones (the chart adds helm's and the config checksum); the
configuration file is compared as its key=value pairs, order aside.
Prints one line per object; exits 1 on the first difference list.
"""
import sys

import yaml

SUBSET = ("labels", "annotations")
CONF = "gate-proxy.conf"


def conf_pairs(text):
    pairs = {}
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            k, _, v = line.partition("=")
            pairs[k.strip()] = v.strip()
    return pairs


# Where an object's name stands (a container's name is not one)
NAME_KEYS = ("name", "serviceAccountName", "serviceName")


def rename(node, names, key="", within=""):
    if isinstance(node, dict):
        return {k: rename(v, names, k, key) for k, v in node.items()}
    if isinstance(node, list):
        return [rename(v, names, key, key) for v in node]
    if isinstance(node, str) and key in NAME_KEYS and within != "containers":
        return names.get(node, node)
    return node


def diff(want, got, path, out):
    if isinstance(want, dict) and isinstance(got, dict):
        subset = path.rsplit(".", 1)[-1] in SUBSET
        for k, v in want.items():
            if k not in got:
                out.append("%s.%s: missing (want %r)" % (path, k, v))
            elif k == CONF and isinstance(v, str):
                w, g = conf_pairs(v), conf_pairs(got[k])
                if w != g:
                    out.append("%s.%s: only reviewed %s; only rendered %s; differing %s" % (
                        path, k, sorted(set(w) - set(g)), sorted(set(g) - set(w)),
                        sorted(x for x in set(w) & set(g) if w[x] != g[x])))
            else:
                diff(v, got[k], "%s.%s" % (path, k), out)
        if not subset:
            for k in got:
                if k not in want:
                    out.append("%s.%s: rendered but not reviewed (%r)" % (path, k, got[k]))
    elif isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        for i, (w, g) in enumerate(zip(want, got)):
            diff(w, g, "%s[%d]" % (path, i), out)
    elif want != got:
        out.append("%s: reviewed %r, rendered %r" % (path, want, got))


def main():
    rendered_path, full = sys.argv[1], sys.argv[2]
    names = {"gate-proxy": full, "gate-proxy-config": full + "-config",
             "gate-proxy-scale-config": full + "-config"}
    rendered = {}
    for d in yaml.safe_load_all(open(rendered_path)):
        if d:
            rendered[(d["kind"], d["metadata"]["name"])] = d
    seen, problems = set(), []
    for path in sys.argv[3:]:
        for want in yaml.safe_load_all(open(path)):
            if not want:
                continue
            want = rename(want, names)
            key = (want["kind"], want["metadata"]["name"])
            seen.add(key)
            got = rendered.get(key)
            if got is None:
                problems.append("%s %s (%s): not rendered" % (key + (path,)))
                continue
            out = []
            got = dict(got)
            meta_w, meta_g = want.pop("metadata"), got.pop("metadata")
            for k in ("labels", "annotations"):
                diff(meta_w.pop(k, {}), meta_g.get(k) or {}, "metadata." + k, out)
            if set(meta_w) - {"name"}:
                out.append("metadata: reviewed %s, not compared" % sorted(set(meta_w) - {"name"}))
            diff(want, got, key[0], out)
            problems += ["%s %s: %s" % (key + (o,)) for o in out]
            print("   %-22s %-28s equal to %s" % (key[0], key[1], path.split("deploy/")[-1])
                  if not out else "   %s %s: %d differences" % (key[0], key[1], len(out)))
    for key in sorted(set(rendered) - seen):
        problems.append("%s %s: rendered, in no reviewed manifest" % key)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    print("compared=%d" % len(seen))
    return 0


if __name__ == "__main__":
    sys.exit(main())
