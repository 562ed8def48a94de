#!/usr/bin/env python3
"""readme_recipes: runs every CLI recipe the READMEs show against this repository's own deploy/,
examples/ and policies/ (issue 40), and fails when one does not do what its README says.

- The CI recipes of README.md ("In CI": the GitHub Actions steps' `run:` and the GitLab job's
  `script:`) run as written, in bash, with `docker` a shell function that runs the image's
  command with the built binary (topoguard image) or kubectl (kubectl image) in the checkout.
  Each step and script line must exit 0 (what makes the CI job pass) and leave its reports.
- Every `sh` and `console` block command of README.md, deploy/webhook/README.md and
  policies/README.md that runs topoguard or `kubectl kustomize` runs with `topoguard` and
  `build/topoguard` the built binary; it must exit as its `# exit N` comment says (else 0), and a
  console block's shown output must be what it prints. The install guide's user overlay is run
  where it lies (deploy/webhook/examples/user-overlay) instead of its copy in ~/platform.
- Commands that need a cluster (`# (cluster)`, kubectl other than `kustomize`) or set the machine
  up (tools/, cmake, apt, image loading) are listed as not run; tests/pristine, tests/image and
  the deploy tests cover the latter.

kubectl comes from the control-plane build (~/.cache/topoguard/control-plane/*/kubectl), else
PATH when its kustomize is v5. Without one, recipes that need it are SKIPPED (listed), and the
test exits 77, which CTest reports as Skipped, never as passed.
Usage: readme_recipes_test.py BINARY SOURCE_DIR
"""
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

import yaml

binary, source = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2])
failures, skipped, not_run, ran = [], [], [], 0


def find_kubectl():
    candidates = sorted(glob.glob(os.path.expanduser("~/.cache/topoguard/control-plane/*/kubectl")))
    if shutil.which("kubectl"):
        candidates.append(shutil.which("kubectl"))
    for candidate in candidates:
        try:
            version = json.loads(subprocess.run([candidate, "version", "--client", "-o", "json"],
                                                capture_output=True, text=True, timeout=60).stdout)
        except (OSError, ValueError, subprocess.TimeoutExpired):
            continue
        if re.match(r"v([5-9]|[1-9][0-9])\.", version.get("kustomizeVersion", "")):
            return candidate
    return None


kubectl = find_kubectl()
sandbox = tempfile.mkdtemp(prefix="readme-recipes-")
bin_dir = os.path.join(sandbox, "bin")
checkout = os.path.join(sandbox, "checkout")
os.makedirs(bin_dir)
os.makedirs(os.path.join(checkout, "build"))
# The checkout: the repository's folders (reports keep the relative paths), and build/topoguard.
for name in ("examples", "policies", "certs"):
    os.symlink(os.path.join(source, name), os.path.join(checkout, name))
# A copy: the install guide writes development certificates into deploy/webhook/dev/certs.
shutil.copytree(os.path.join(source, "deploy"), os.path.join(checkout, "deploy"), symlinks=True)
os.symlink(binary, os.path.join(checkout, "build", "topoguard"))
os.symlink(binary, os.path.join(bin_dir, "topoguard"))
if kubectl:
    os.symlink(kubectl, os.path.join(bin_dir, "kubectl"))
env = dict(os.environ, PATH=bin_dir + ":/usr/bin:/bin", HOME=os.path.join(sandbox, "home"))

# `docker` for the CI recipes: run/create/cp/start/rm, with the image's entrypoint replaced by
# the local binary. Options that take a value are skipped with it.
FAKE_DOCKER = r'''
docker_image_command() {  # IMAGE -> the local command for it
  case $1 in
    *topoguard*) echo topoguard ;;
    *kubectl*) echo kubectl ;;
    *) echo "fake docker: unknown image $1" >&2; return 1 ;;
  esac
}
docker() {
  local verb=$1 name= image; shift
  case $verb in
    run|create)
      while [ $# -gt 0 ]; do
        case $1 in
          -v|-w|-e|--name) [ "$1" = --name ] && name=$2; shift 2 ;;
          -*) shift ;;
          *) break ;;
        esac
      done
      image=$1; shift
      if [ "$verb" = create ]; then
        printf '%q ' "$(docker_image_command "$image")" "$@" >"$FAKE_DOCKER_DIR/$name"
      else
        command -v "$(docker_image_command "$image")" >/dev/null || return 127
        "$(docker_image_command "$image")" "$@"
      fi ;;
    cp) ;;  # the container's /src is the checkout itself
    start) eval "$(cat "$FAKE_DOCKER_DIR/${!#}")" ;;
    rm) rm -f "$FAKE_DOCKER_DIR/$1" ;;
  esac
}
'''


def needs_kubectl(command):
    return re.search(r"\bkubectl\b|KUBECTL_IMAGE", command) is not None


def run_shell(script, what):
    """Runs `script` in the checkout with bash -eo pipefail (as CI runners do); exit code."""
    docker_dir = os.path.join(sandbox, "docker")
    os.makedirs(docker_dir, exist_ok=True)
    result = subprocess.run(["bash", "-eo", "pipefail", "-c", FAKE_DOCKER + script],
                            cwd=checkout, env=dict(env, FAKE_DOCKER_DIR=docker_dir),
                            capture_output=True, text=True, timeout=300)
    return result


def fail(what, detail):
    failures.append(f"{what}: {detail}")


def readme_text(name):
    with open(os.path.join(source, name), encoding="utf-8") as handle:
        return handle.read()


def yaml_blocks(text):
    return [m.group(1) for m in re.finditer(r"```yaml\n(.*?)```", text, re.S)]


def check_ci_recipes():
    global ran
    readme = readme_text("README.md")
    blocks = [yaml.safe_load(block) for block in yaml_blocks(readme)]
    github = next(b for b in blocks if isinstance(b, dict) and "jobs" in b)
    gitlab = next(b for b in blocks if isinstance(b, dict) and "topoguard" in b
                  and "script" in b["topoguard"])
    for job_name, job in github["jobs"].items():
        uploads = [s for s in job["steps"] if "upload-sarif" in str(s.get("uses", ""))]
        if not uploads or uploads[0].get("if") != "always()":
            fail("GitHub Actions", "the SARIF upload does not run when the job fails (if: always())")
        for step in job["steps"]:
            if "run" not in step:
                continue
            what = f"GitHub Actions step `{step['run'].strip()[:70]}...`"
            if needs_kubectl(step["run"]) and not kubectl:
                skipped.append(what)
                continue
            ran += 1
            result = run_shell(step["run"], what)
            if result.returncode != 0:
                fail(what, f"exit {result.returncode}: {result.stderr[-400:]}")
    sarif = os.path.join(checkout, "topoguard.sarif")
    try:
        with open(sarif, encoding="utf-8") as handle:
            run = json.load(handle)["runs"][0]
        if not run["invocations"][0]["executionSuccessful"]:
            fail("GitHub Actions", "topoguard.sarif: the run is not successful")
    except (OSError, ValueError, KeyError, IndexError) as error:
        fail("GitHub Actions", f"topoguard.sarif is not a SARIF run: {error}")
    job = gitlab["topoguard"]
    if job.get("artifacts", {}).get("when") != "always":
        fail("GitLab CI", "artifacts are not kept when the job fails (when: always)")
    script = "\n".join(f"export {k}={shlex.quote(str(v))}" for k, v in job.get("variables", {}).items())
    script += "\n" + "\n".join(job["script"])
    what = "GitLab CI script"
    if needs_kubectl(script) and not kubectl:
        skipped.append(what)
        return
    ran += 1
    result = run_shell(script, what)
    if result.returncode != 0:
        fail(what, f"exit {result.returncode}: {result.stderr[-400:]}")
    junit = job["artifacts"]["reports"]["junit"]
    if subprocess.run(["python3", "-c", "import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])",
                       os.path.join(checkout, junit)]).returncode != 0:
        fail(what, f"{junit} is not XML")


SETUP = re.compile(r"^(bash tools/|tools/|cmake |sudo |kind |docker |ctr |skopeo |cp -r )")


def commands_of(block):
    """(command, expected output or None) per command of a sh or console block."""
    lines = block.splitlines()
    console = any(line.startswith("$ ") for line in lines)
    commands, current, output = [], None, []
    for line in lines:
        if console and not line.startswith("$ "):
            if current is not None:
                output.append(line)
            continue
        if current is not None and console:
            commands.append((current, "\n".join(output)))
            current, output = None, []
        text = line[2:] if console else line
        if not console and commands and commands[-1][0].endswith("\\"):
            commands[-1] = (commands[-1][0][:-1] + " " + text.strip(), None)
            continue
        if console:
            current = text
        elif text.strip() and not text.lstrip().startswith("#"):
            commands.append((text, None))
    if current is not None:
        commands.append((current, "\n".join(output)))
    return commands


def check_block_recipes():
    global ran
    for readme in ("README.md", "deploy/webhook/README.md", "policies/README.md"):
        text = readme_text(readme)
        for match in re.finditer(r"```(sh|console)\n(.*?)```", text, re.S):
            line = text[:match.start()].count("\n") + 1
            for command, shown in commands_of(match.group(2)):
                where = f"{readme}:{line} `{command.split('#')[0].strip()}`"
                comment = command.split(" #", 1)[1] if " #" in command else ""
                runnable = re.search(r"(^|[|;&]\s*)(build/)?topoguard |kubectl kustomize|^certs/",
                                     command)
                cluster = "(cluster)" in comment or re.search(r"kubectl (?!kustomize)", command)
                if cluster or SETUP.match(command) or not runnable or "/usr/share/" in command:
                    not_run.append(where + (" (cluster)" if cluster else " (setup)" if SETUP.match(command)
                                            else " (runs neither topoguard nor kustomize)"))
                    continue
                # The install guide's overlay, run where it lies rather than from its copy.
                command = command.replace("~/platform/topoguard", "deploy/webhook/examples/user-overlay")
                if needs_kubectl(command) and not kubectl:
                    skipped.append(where)
                    continue
                if "deviceclasses.yaml" in command:
                    # "your" DeviceClasses: the shipped test suites' capture stands in.
                    shutil.copy(os.path.join(source, "policies/tests/manifests/cluster-state.yaml"),
                                os.path.join(checkout, "deviceclasses.yaml"))
                expected = re.search(r"exit (\d+)", comment)
                ran += 1
                result = run_shell(command, where)
                want = int(expected.group(1)) if expected else None
                if want is not None and result.returncode != want:
                    fail(where, f"exit {result.returncode}, the README says {want}: {result.stderr[-300:]}")
                elif want is None and shown is None and result.returncode != 0:
                    fail(where, f"exit {result.returncode}: {result.stderr[-300:]}")
                if shown is not None and result.stdout.rstrip("\n") != shown.rstrip("\n"):
                    fail(where, f"prints\n{result.stdout}\nthe README shows\n{shown}")


check_ci_recipes()
check_block_recipes()
for what in not_run:
    print(f"not run here: {what}")
for what in skipped:
    print(f"SKIPPED (no kubectl with kustomize v5): {what}")
for what in failures:
    print(f"FAILED: {what}", file=sys.stderr)
print(f"{ran} recipes run, {len(failures)} failed, {len(skipped)} skipped, {len(not_run)} not run here")
shutil.rmtree(sandbox, ignore_errors=True)
sys.exit(1 if failures else 77 if skipped else 0)
