#!/usr/bin/env python3
"""scripts/kubernetes, offline: the objects against the Kubernetes API's schemas
(validate.mjs, npm's kubernetes-models), then what a schema cannot check: each
pod owns its GPUs and an RDMA device, can pin memory (IPC_LOCK, and pod.sh
lifts the memlock limit or refuses), finds the others through the headless
Service, and pod 0 launches pods x GPUs ranks of a profile the binary knows.
Each check is also shown to fail on a manifest broken for it.

    manifest_test.py REPO FABRICBENCH NODE_MODULES
Exit 77 (skipped, with the reason) when NODE_MODULES lacks kubernetes-models
outside CI; in CI (CI=1) that is a failure: scripts/setup.sh installs it.
"""
import copy
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import yaml

repo, fabricbench, modules = pathlib.Path(sys.argv[1]), sys.argv[2], pathlib.Path(sys.argv[3])
here = repo / "scripts/kubernetes"
failures = []


def fail(message):
    failures.append(message)
    print("FAIL:", message)


def objects():
    kust = yaml.safe_load((here / "kustomization.yaml").read_text())
    objs = []
    for res in kust["resources"]:
        objs += [d for d in yaml.safe_load_all((here / res).read_text()) if d]
    for gen in kust.get("configMapGenerator", []):
        data = {f: (here / f).read_text() for f in gen["files"]}
        objs.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": gen["name"]}, "data": data})
    return objs


def validate(objs):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(objs, f)
    r = subprocess.run(["node", str(repo / "tests/kubernetes/validate.mjs"), str(modules), f.name],
                       capture_output=True, text=True)
    os.unlink(f.name)
    return r.returncode, r.stdout + r.stderr


def one(objs, kind):
    found = [o for o in objs if o["kind"] == kind]
    return found[0] if len(found) == 1 else None


def env_of(container):
    return {e["name"]: e for e in container.get("env", [])}


def problems(objs):
    """What the schema cannot check; [] when the manifest holds together."""
    out = []
    svc, job = one(objs, "Service"), one(objs, "Job")
    if not svc or not job:
        return ["want exactly one Service and one Job"]
    spec, pod = job["spec"], job["spec"]["template"]["spec"]
    if svc["spec"].get("clusterIP") != "None":
        out.append("the Service is not headless (clusterIP: None): pods get no DNS names")
    if svc["spec"].get("selector", {}).get("job-name") != job["metadata"]["name"]:
        out.append("the Service does not select the Job's pods (selector job-name)")
    if pod.get("subdomain") != svc["metadata"]["name"]:
        out.append("the pods' subdomain is not the Service: no <job>-<index>.<service> names")
    if spec.get("completionMode") != "Indexed":
        out.append("not an Indexed Job: pods have no JOB_COMPLETION_INDEX")
    if pod.get("restartPolicy") != "Never" or spec.get("backoffLimit") != 0:
        out.append("a failed verdict would be retried (restartPolicy Never, backoffLimit 0)")
    for c in pod["containers"]:
        env, limits = env_of(c), c.get("resources", {}).get("limits", {})
        nodes = int(env.get("FB_NODES", {}).get("value", -1))
        gpus = int(env.get("FB_GPUS_PER_NODE", {}).get("value", -1))
        if not (spec.get("completions") == spec.get("parallelism") == nodes):
            out.append(f"completions {spec.get('completions')}, parallelism {spec.get('parallelism')} and "
                       f"FB_NODES {nodes} differ: the rank count would not match the pods")
        if int(limits.get("nvidia.com/gpu", 0)) < 1 or int(limits.get("nvidia.com/gpu", 0)) != gpus:
            out.append(f"container {c['name']}: nvidia.com/gpu {limits.get('nvidia.com/gpu')} is not "
                       f"FB_GPUS_PER_NODE {gpus} (a pod that does not request its GPUs may share them)")
        if not any(k.startswith("rdma/") and int(v) >= 1 for k, v in limits.items()):
            out.append(f"container {c['name']}: requests no RDMA device (rdma/...): NCCL would use sockets")
        if "IPC_LOCK" not in c.get("securityContext", {}).get("capabilities", {}).get("add", []):
            out.append(f"container {c['name']}: no IPC_LOCK: RDMA cannot pin memory")
        if env.get("FB_SERVICE", {}).get("value") != svc["metadata"]["name"]:
            out.append("FB_SERVICE is not the Service's name")
        job_name = env.get("FB_JOB", {})
        if job_name.get("value") != job["metadata"]["name"] and \
                job_name.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") != "metadata.labels['job-name']":
            out.append("FB_JOB is neither the Job's name nor its job-name label")
        mounts = {m["mountPath"]: m["name"] for m in c.get("volumeMounts", [])}
        volumes = {v["name"]: v for v in pod.get("volumes", [])}
        shm = volumes.get(mounts.get("/dev/shm"), {})
        if shm.get("emptyDir", {}).get("medium") != "Memory":
            out.append("no memory-backed /dev/shm: NCCL's shared memory inside the pod is 64 MiB")
        script = volumes.get(mounts.get("/etc/fabricbench"), {}).get("configMap", {}).get("name")
        if not any(o["kind"] == "ConfigMap" and o["metadata"]["name"] == script for o in objs) or \
                "/etc/fabricbench/pod.sh" not in c.get("command", []):
            out.append("the container does not run pod.sh from the fabricbench-pod ConfigMap")
    return out


objs = objects()
if not (modules / "kubernetes-models").is_dir():
    why = f"no {modules}/kubernetes-models (scripts/setup.sh installs it with npm)"
    if os.environ.get("CI"):
        sys.exit("FAIL: " + why)
    print("SKIP:", why)
    sys.exit(77)

# 1. The API's schemas: every object valid, and the validator is live (it refuses two broken Jobs).
rc, text = validate(objs)
print(text, end="")
if rc != 0:
    fail("an object does not validate against the Kubernetes schemas")
for field, value in (("completions", "two"), ("restartPolicy", "Sometimes")):
    broken = copy.deepcopy(objs)
    job = one(broken, "Job")
    (job["spec"] if field == "completions" else job["spec"]["template"]["spec"])[field] = value
    rc, text = validate(broken)
    if rc != 1 or "invalid Job" not in text:
        fail(f"the validator took {field}: {value!r}: {text}")

# 2. What the schema cannot check, on the manifest and on copies broken for each check.
for p in problems(objs):
    fail(p)
breakers = {
    "no GPU request": lambda c, j, s: c["resources"]["limits"].pop("nvidia.com/gpu"),
    "no RDMA device": lambda c, j, s: c["resources"]["limits"].pop("rdma/rdma_shared_device_a"),
    "no IPC_LOCK": lambda c, j, s: c["securityContext"]["capabilities"].update(add=[]),
    "ranks that do not match the pods": lambda c, j, s: j["spec"].update(completions=3, parallelism=3),
    "not headless": lambda c, j, s: s["spec"].update(clusterIP="10.0.0.1"),
    "another subdomain": lambda c, j, s: j["spec"]["template"]["spec"].update(subdomain="other"),
}
for name, breaker in breakers.items():
    broken = copy.deepcopy(objs)
    job, svc = one(broken, "Job"), one(broken, "Service")
    breaker(job["spec"]["template"]["spec"]["containers"][0], job, svc)
    if not problems(broken):
        fail(f"a manifest with {name} passed the checks")

# 3. pod.sh: refuses to run without unlimited locked memory, and pod 0 launches pods x GPUs ranks of a profile
#    the binary knows (its dry run prints the launch line).
pod_sh = (here / "pod.sh").read_text()
if "ulimit -l unlimited" not in pod_sh:
    fail("pod.sh does not lift the locked-memory limit")
container = one(objs, "Job")["spec"]["template"]["spec"]["containers"][0]
env = {k: v.get("value", "") for k, v in env_of(container).items()}
env.update(FB_JOB="fabricbench-acceptance", JOB_COMPLETION_INDEX="0", FB_DRY_RUN="1", PATH=os.environ["PATH"])
r = subprocess.run(["bash", str(here / "pod.sh")], env=env, capture_output=True, text=True)
line = r.stdout.strip()
print("pod 0 would launch:", line)
nodes, gpus = int(env["FB_NODES"]), int(env["FB_GPUS_PER_NODE"])
for want in (f"mpirun -np {nodes * gpus} ", f"--map-by ppr:{gpus}:node", f"check --profile {env['FB_PROFILE']} "):
    if want not in line:
        fail(f"pod 0's launch line lacks '{want}': {line} {r.stderr}")
profiles = subprocess.run([fabricbench, "check", "--list-profiles"], capture_output=True, text=True).stdout
if f"  {env['FB_PROFILE']} " not in profiles:
    fail(f"FB_PROFILE {env['FB_PROFILE']} is no profile `fabricbench check --list-profiles` knows")

print(f"{len(objs)} objects, {len(breakers)} broken manifests refused, {len(failures)} failures")
sys.exit(1 if failures else 0)
