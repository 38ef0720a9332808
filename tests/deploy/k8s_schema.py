#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Every Kubernetes object in deploy/kubernetes/ against the API's schemas.

usage: k8s_schema.py SCHEMAS DEPLOY_DIR [BROKEN.yaml]

SCHEMAS is the directory `make deps-test` installs tests/deploy/schemas/'s
packages into (BUILDDIR/k8s-schemas: kubernetes-models, whose ajv validators
and TypeScript interfaces are generated from Kubernetes' OpenAPI spec, and
@kubernetes-models/prometheus-operator, from prometheus-operator's CRDs). Two
validators, both from those packages:
  - each object's ajv validator (types, required fields, enums, formats);
  - tsc over the object as a literal of the kind's interface: the generated
    JSON schemas allow unknown properties, TypeScript's excess-property check
    refuses them, at every depth (a misspelled field is an error).
Every object must have a schema (an unknown apiVersion/kind fails). Before
that, the check is shown to bite: the DaemonSet with one field misspelled
(securityContext -> securityContxt) and a PodMonitor's endpoint port renamed
must both fail. With BROKEN.yaml, that file is checked alone and must fail
(the negative controls of the meson test deploy_schema_broken).
A missing schema cache or node is a named skip, never a pass.
"""
import copy
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:
    print("SKIP(tool:python3-yaml): python3-yaml not installed")
    sys.exit(77)

# apiVersion -> the package and folder of its models.
GROUPS = {"v1": "kubernetes-models/v1",
          "apps/v1": "kubernetes-models/apps/v1",
          "rbac.authorization.k8s.io/v1": "kubernetes-models/rbac.authorization.k8s.io/v1",
          "networking.k8s.io/v1": "kubernetes-models/networking.k8s.io/v1",
          "monitoring.coreos.com/v1":
              "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1"}


def module(schemas, obj):
    group = GROUPS.get(obj.get("apiVersion"))
    if not group or not isinstance(obj.get("kind"), str):
        return None
    mod = "%s/%s" % (group, obj["kind"])
    return mod if os.path.exists(os.path.join(schemas, "node_modules", mod + ".js")) else None


def validate(schemas, objs):
    """[(name, obj)] -> {name: [error lines]} (empty: valid)."""
    errors = {name: [] for name, _ in objs}
    work = tempfile.mkdtemp(prefix="k8s-schema-", dir=schemas)
    try:
        imports, checks, literals = [], [], []
        for i, (name, obj) in enumerate(objs):
            mod = module(schemas, obj)
            if not mod:
                errors[name].append("no schema for apiVersion %r kind %r" %
                                    (obj.get("apiVersion"), obj.get("kind")))
                continue
            imports.append('import { %s as M%d } from "%s";' % (obj["kind"], i, mod))
            checks.append("check(%s, M%d, %s);" % (json.dumps(name), i, json.dumps(obj)))
            literals.append('import type { I%s as T%d } from "%s";\n'
                            "// %s\nexport const o%d: T%d = %s;" %
                            (obj["kind"], i, mod, name, i, i, json.dumps(obj, indent=1)))
        with open(os.path.join(work, "ajv.mjs"), "w") as f:
            f.write("\n".join(imports) + "\n"
                    "function check(name, M, o) {\n"
                    "  try { new M(o).validate(); }\n"
                    "  catch (e) { console.log(JSON.stringify([name, 'ajv: ' + e.message])); }\n"
                    "}\n" + "\n".join(checks) + "\n")
        with open(os.path.join(work, "objects.ts"), "w") as f:
            f.write("\n".join(literals) + "\n")
        r = subprocess.run(["node", os.path.join(work, "ajv.mjs")], capture_output=True,
                           text=True, cwd=work)
        if r.returncode != 0:
            raise SystemExit("FAIL: node: %s" % r.stderr.strip())
        for line in r.stdout.splitlines():
            name, msg = json.loads(line)
            errors[name].append(msg)
        tsc = os.path.join(schemas, "node_modules", "typescript", "bin", "tsc")
        r = subprocess.run(["node", tsc, "--noEmit", "--strict", "--skipLibCheck",
                            "--module", "nodenext", "--moduleResolution", "nodenext",
                            "--target", "es2022", "objects.ts"],
                           capture_output=True, text=True, cwd=work)
        # objects.ts(LINE,COL): error TSnnnn: ... -> the object whose literal holds LINE.
        starts = []
        with open(os.path.join(work, "objects.ts")) as f:
            for n, line in enumerate(f, 1):
                if line.startswith("// "):
                    starts.append((n, line[3:].strip()))
        for line in r.stdout.splitlines():
            if not line.startswith("objects.ts("):
                continue
            n = int(line[len("objects.ts("):].split(",")[0])
            name = [s for s in starts if s[0] <= n][-1][1]
            errors[name].append("tsc: " + line.split(": ", 1)[1])
        if r.returncode != 0 and not any(errors.values()):
            raise SystemExit("FAIL: tsc: %s%s" % (r.stdout, r.stderr))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return errors


def load(path):
    with open(path) as f:
        return [("%s#%d %s/%s" % (os.path.basename(path), i, d.get("kind"),
                                  d.get("metadata", {}).get("name")), d)
                for i, d in enumerate(x for x in yaml.safe_load_all(f) if x)]


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    schemas, deploy = os.path.abspath(sys.argv[1]), sys.argv[2]
    if not shutil.which("node"):
        print("SKIP(tool:node): Node.js not installed")
        return 77
    if not os.path.isdir(os.path.join(schemas, "node_modules", "kubernetes-models")):
        print("SKIP(tool:k8s-schemas): no schemas in %s (make deps-test installs them)" % schemas)
        return 77
    if len(sys.argv) > 3:  # a broken manifest: must fail
        errs = validate(schemas, load(sys.argv[3]))
        bad = {k: v for k, v in errs.items() if v}
        for k, v in bad.items():
            print("refused, as it must be: %s: %s" % (k, v[0]))
        print("# checks: %d passed, %d failed, 0 skipped" % (bool(bad), not bad))
        return 0 if bad else 1
    objs = []
    for path in sorted(glob.glob(os.path.join(deploy, "kubernetes", "*.yaml"))):
        objs += load(path)
    kinds = {o["kind"] for _, o in objs}
    for want in ("Namespace", "DaemonSet", "NetworkPolicy", "PodMonitor"):
        if want not in kinds:
            print("FAIL: no %s in deploy/kubernetes/ (have %s)" % (want, sorted(kinds)))
            return 1
    # The check bites: a misspelled field, a wrong type.
    ds = next(o for _, o in objs if o["kind"] == "DaemonSet")
    typo = copy.deepcopy(ds)
    c0 = typo["spec"]["template"]["spec"]["containers"][0]
    c0["securityContxt"] = c0.pop("securityContext")
    pm = copy.deepcopy(next(o for _, o in objs if o["kind"] == "PodMonitor"))
    pm["spec"]["podMetricsEndpoints"][0]["prot"] = pm["spec"]["podMetricsEndpoints"][0].pop("port")
    wrong = copy.deepcopy(ds)
    wrong["spec"]["template"]["spec"]["hostPID"] = "yes"
    controls = validate(schemas, [("misspelled securityContxt", typo),
                                  ("misspelled PodMonitor prot", pm),
                                  ("hostPID a string", wrong)])
    for name, errs in controls.items():
        if not errs:
            print("FAIL: the validators accept a broken object (%s)" % name)
            return 1
        print("ok: refused: %s: %s" % (name, errs[0]))
    errors = validate(schemas, objs)
    n_bad = 0
    for name, errs in errors.items():
        if errs:
            n_bad += 1
            for e in errs:
                print("FAIL: %s: %s" % (name, e))
        else:
            print("ok: %s" % name)
    print("# checks: %d passed, %d failed, 0 skipped" % (len(errors) - n_bad + len(controls),
                                                        n_bad))
    return 1 if n_bad else 0


if __name__ == "__main__":
    sys.exit(main())
