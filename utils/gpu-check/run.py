#!/usr/bin/env python3
# ===- run.py - Run the programs of the GPU check bundle ------------------=== #
#
# Called by run.sh (see there for the options). Reads the bundle's
# manifest.json, counts the CUDA devices that answer (tools/
# cuda-device-visible.py, the probe of lit's cuda-gpu features), runs each
# program in a process group of its own under its time limit (a hang costs
# its limit, not the loan), skips the ones needing more devices than
# answer, and, on a GPU, reruns the sanitizer subset under
# compute-sanitizer --tool memcheck --leak-check full. It records each
# program's output, exit status and time, the machine (nvidia-smi, driver
# and runtime versions) and the bundle's manifest and expected data, and
# packs them into one archive. It judges nothing: check.py does, on the CPU
# machine. Only the Python standard library is used (3.8 or later).
#
# ===----------------------------------------------------------------------=== #
"""Runs the GPU check bundle and archives the results."""

import argparse
import json
import os
import platform
import resource
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tarfile
import tempfile
import time

BUNDLE = os.path.dirname(os.path.abspath(__file__))
CUDART = "libcudart.so.13"
ARCHIVE = "gpu-check-results.tar.gz"
SUMMARY = "gpu-check-summary.txt"
SANITIZER_TIMEOUT = 90
SANITIZER_EXIT = 97


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def capture(command, timeout=60, env=None):
    """stdout+stderr of a small command, or a note why there is none."""
    try:
        process = subprocess.run(command, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True,
                                 timeout=timeout, env=env)
        return process.stdout.strip()
    except (OSError, subprocess.SubprocessError) as error:
        return f"({command[0]}: {error})"


def run_program(argv, env, cwd, stdin, stdout_path, stderr_path, timeout):
    """Runs one program in its own process group; returns its record."""
    started = time.time()
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    record = {"started": now()}
    with open(stdin or os.devnull, "rb") as source, \
            open(stdout_path, "wb") as out:
        err = out if stderr_path is None else open(stderr_path, "wb")
        try:
            process = subprocess.Popen(argv, cwd=cwd, env=env, stdin=source,
                                       stdout=out, stderr=err,
                                       start_new_session=True)
        except OSError as error:
            record.update(status="error", error=str(error), seconds=0.0)
            return record
        try:
            code = process.wait(timeout=timeout)
            record.update(status="ran", exit=code)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except OSError:
                pass
            process.wait()
            record.update(status="timeout", exit=None, timeout=timeout)
        finally:
            if err is not out:
                err.close()
    record["seconds"] = round(time.time() - started, 3)
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    record["cpu_seconds"] = round(used.ru_utime + used.ru_stime -
                                  cpu.ru_utime - cpu.ru_stime, 3)
    return record


class Runner:
    def __init__(self, args):
        self.args = args
        self.deadline = time.time() + args.budget
        self.results_dir = tempfile.mkdtemp(prefix="gpu-check-results-")
        self.root = os.path.join(self.results_dir, "gpu-check-results")
        for folder in ("items", "sanitizer"):
            os.makedirs(os.path.join(self.root, folder))
        self.scratch = os.path.join(self.results_dir, "scratch")
        os.makedirs(self.scratch)
        with open(os.path.join(BUNDLE, "manifest.json")) as f:
            self.manifest = json.load(f)
        self.env = dict(os.environ)
        for key in [k for k in self.env if k.startswith("ETCOPY_CUDA_SIM_")]:
            del self.env[key]
        if args.simulator:
            sim = os.path.join(BUNDLE, "sim")
            self.env["LD_LIBRARY_PATH"] = os.pathsep.join(
                p for p in [sim, os.environ.get("LD_LIBRARY_PATH")] if p)
            self.env["ETCOPY_CUDA_SIM_DEVICES"] = str(args.sim_devices)
            self.cudart = os.path.join(sim, CUDART)
        else:
            self.cudart = os.path.join(BUNDLE, "lib", CUDART)
        self.records = []

    def left(self):
        return self.deadline - time.time()

    def probe(self):
        if self.args.assume_devices is not None:
            return self.args.assume_devices, "assumed (--assume-devices)"
        output = capture([sys.executable,
                          os.path.join(BUNDLE, "tools",
                                       "cuda-device-visible.py"),
                          "--count", self.cudart], timeout=120, env=self.env)
        try:
            return int(output.splitlines()[-1]), output
        except (ValueError, IndexError):
            return 0, output

    def machine(self, devices, probe_output):
        info = {
            "mode": "simulator" if self.args.simulator else "gpu",
            "date": now(), "host": socket.gethostname(),
            "platform": platform.platform(),
            "libc": " ".join(platform.libc_ver()),
            "python": sys.version.split()[0],
            "devices": devices, "probe": probe_output,
            "budget_seconds": self.args.budget,
            "ld_library_path": self.env.get("LD_LIBRARY_PATH", ""),
            "bundle": {k: self.manifest.get(k) for k in ("created",
                                                          "commit")},
        }
        if self.args.simulator:
            info["sim_devices"] = self.args.sim_devices
        # Versions from the runtime the programs load (a process of its own:
        # no CUDA state in this one).
        versions = capture([sys.executable, "-c", (
            "import ctypes,sys\n"
            "try:\n"
            " r=ctypes.CDLL(sys.argv[1])\n"
            "except OSError as e:\n"
            " sys.exit(print('no CUDA runtime: %s'%e))\n"
            "for f in ('Driver','Runtime'):\n"
            " v=ctypes.c_int(0)\n"
            " e=getattr(r,'cuda%sGetVersion'%f)(ctypes.byref(v))\n"
            " print('%s %d.%d'%(f.lower(),v.value//1000,v.value%1000//10)"
            " if e==0 else '%s: error %d'%(f.lower(),e))"),
            self.cudart], env=self.env)
        info["cuda_versions"] = ", ".join(versions.splitlines())
        # Where the loader finds each library of a bundled program here.
        programs = [i["argv"][0] for i in self.manifest["items"]
                    if i.get("argv") and i["kind"] == "test"]
        if programs:
            info["ldd"] = capture(["ldd", os.path.join(BUNDLE, programs[0])],
                                  env=self.env)
        if not self.args.simulator and shutil.which("nvidia-smi"):
            info["gpus"] = capture(["nvidia-smi", "--query-gpu=index,name,"
                                    "driver_version,memory.total,pci.bus_id",
                                    "--format=csv,noheader"])
            with open(os.path.join(self.root, "nvidia-smi.txt"), "w") as f:
                f.write(capture(["nvidia-smi"]) + "\n")
        return info

    def run_items(self, items, devices):
        for item in items:
            record = {"id": item["id"], "kind": item["kind"]}
            self.records.append(record)
            if "skip" in item:
                record.update(status="skipped", reason=item["skip"])
                continue
            if item["devices"] > devices:
                record.update(status="skipped", reason=(
                    f"needs {item['devices']} CUDA devices, {devices} "
                    "answer"))
                continue
            if self.args.only and not any(o in item["id"]
                                          for o in self.args.only):
                record.update(status="skipped", reason="not selected (--only)")
                continue
            if self.left() < 1:
                record.update(status="not-run", reason="the time budget "
                              f"({self.args.budget}s) ran out")
                continue
            base = os.path.join(self.root, "items", safe(item["id"]))
            env = dict(self.env, **item.get("env", {}))
            argv = [os.path.join(BUNDLE, item["argv"][0])] + item["argv"][1:]
            stdin = os.path.join(BUNDLE, item["stdin"]) if item.get(
                "stdin") else None
            record.update(run_program(
                argv, env, self.scratch, stdin, base + ".out",
                None if item.get("merge_stderr") else base + ".err",
                min(item["timeout"] * self.args.timeout_scale,
                    max(self.left(), 1))))
            record["output"] = os.path.relpath(base + ".out", self.root)
            if not item.get("merge_stderr"):
                record["stderr"] = os.path.relpath(base + ".err", self.root)
            print(f"gpu-check: {item['id']}: {describe(record)}", flush=True)

    def sanitize(self, items, devices):
        """compute-sanitizer memcheck with leak checking, on the items
        marked for it that ran; stops at the first sign that it does not
        work on this machine."""
        record = {"id": "sanitizer", "kind": "sanitizer-tool"}
        self.records.append(record)
        if self.args.simulator:
            record.update(status="skipped", reason="the simulator is no GPU")
            return
        if self.args.no_sanitizer:
            record.update(status="skipped", reason="--no-sanitizer")
            return
        tool = self.args.sanitizer or shutil.which("compute-sanitizer") or \
            next((p for p in ("/usr/local/cuda/bin/compute-sanitizer",
                              "/usr/local/cuda/compute-sanitizer/"
                              "compute-sanitizer") if os.path.exists(p)),
                 None)
        if not tool:
            record.update(status="skipped", reason="no compute-sanitizer")
            return
        record.update(status="ran", tool=tool,
                      version=capture([tool, "--version"]))
        ran = {r["id"] for r in self.records if r.get("status") == "ran"}
        for item in items:
            if not item.get("sanitize") or item["id"] not in ran:
                continue
            entry = {"id": "sanitizer:" + item["id"], "kind": "sanitizer",
                     "of": item["id"]}
            self.records.append(entry)
            if self.left() < 5:
                entry.update(status="not-run", reason="the time budget "
                             f"({self.args.budget}s) ran out")
                continue
            path = os.path.join(self.root, "sanitizer",
                                safe(item["id"]) + ".txt")
            argv = [tool, "--tool", "memcheck", "--leak-check", "full",
                    "--error-exitcode", str(SANITIZER_EXIT),
                    "--print-limit", "50",
                    os.path.join(BUNDLE, item["argv"][0])] + item["argv"][1:]
            stdin = os.path.join(BUNDLE, item["stdin"]) if item.get(
                "stdin") else None
            entry.update(run_program(
                argv, dict(self.env, **item.get("env", {})), self.scratch,
                stdin, path, None,
                min(SANITIZER_TIMEOUT, max(self.left(), 1))))
            entry["output"] = os.path.relpath(path, self.root)
            print(f"gpu-check: {entry['id']}: {describe(entry)}", flush=True)
            with open(path, errors="replace") as f:
                text = f.read()
            if "ERROR SUMMARY" not in text:
                record.update(status="unusable", reason=(
                    "no ERROR SUMMARY from compute-sanitizer: " +
                    text.strip()[-300:]))
                return

    def archive(self, info):
        info["finished"] = now()
        info["seconds"] = round(time.time() - self.deadline +
                                self.args.budget, 1)
        with open(os.path.join(self.root, "info.json"), "w") as f:
            json.dump(info, f, indent=1)
        with open(os.path.join(self.root, "results.json"), "w") as f:
            json.dump(self.records, f, indent=1)
        shutil.copy2(os.path.join(BUNDLE, "manifest.json"), self.root)
        shutil.copytree(os.path.join(BUNDLE, "expected"),
                        os.path.join(self.root, "expected"))
        os.makedirs(self.args.out, exist_ok=True)
        archive = os.path.join(self.args.out, ARCHIVE)
        with tarfile.open(archive, "w:gz") as tar:
            tar.add(self.root, arcname="gpu-check-results")
        counts = {}
        for record in self.records:
            key = record.get("status")
            if key == "ran":
                key = "exit 0" if record.get("exit") == 0 else "exit != 0"
            counts[key] = counts.get(key, 0) + 1
        lines = [f"gpu-check: {info['mode']} run of {info['date']}, "
                 f"{info['devices']} device(s), {info['seconds']}s",
                 "gpu-check: " + ", ".join(f"{n} {k}" for k, n in
                                           sorted(counts.items()))]
        lines += [f"gpu-check: {r['id']}: {describe(r)}"
                  for r in self.records
                  if r.get("status") in ("timeout", "error", "not-run",
                                         "unusable")]
        lines.append(f"gpu-check: results in {archive}; check them with "
                     "utils/gpu-check/check.py on the CPU machine")
        with open(os.path.join(self.args.out, SUMMARY), "w") as f:
            f.write("\n".join(lines) + "\n")
        print("\n".join(lines), flush=True)
        shutil.rmtree(self.results_dir, ignore_errors=True)


def describe(record):
    status = record.get("status")
    if status == "ran":
        return f"exit {record['exit']} in {record['seconds']}s"
    if status == "timeout":
        return f"killed after {record['timeout']:.0f}s"
    return status + (f" ({record['reason']})" if record.get("reason") else
                     f" ({record['error']})" if record.get("error") else "")


def safe(identifier):
    return "".join(c if c.isalnum() or c in "-_." else "_"
                   for c in identifier)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default=os.environ.get("OUT") or
                        os.path.join(os.getcwd(), "gpu-check-out"),
                        help="where the archive goes (default: $OUT, else "
                        "./gpu-check-out)")
    parser.add_argument("--budget", type=float,
                        help="seconds after which no program starts "
                        "(default: 270 on a GPU, 3600 on the simulator)")
    parser.add_argument("--timeout-scale", type=float,
                        help="multiplies each program's time limit "
                        "(default: 1 on a GPU, 10 on the simulator, whose "
                        "copies run on a CPU that others may share)")
    parser.add_argument("--simulator", action="store_true",
                        help="run against the CUDA simulator (sim/)")
    parser.add_argument("--sim-devices", type=int, default=2,
                        help="devices the simulator has (default: 2)")
    parser.add_argument("--assume-devices", type=int,
                        help="skip the probe: this many devices answer")
    parser.add_argument("--only", action="append", default=[],
                        metavar="TEXT", help="run only the items whose id "
                        "contains TEXT (repeatable)")
    parser.add_argument("--no-sanitizer", action="store_true",
                        help="do not run compute-sanitizer")
    parser.add_argument("--sanitizer", metavar="PATH",
                        help="the compute-sanitizer to run (default: the "
                        "one on PATH or in /usr/local/cuda)")
    args = parser.parse_args()
    args.out = os.path.abspath(args.out)
    if args.budget is None:
        args.budget = 3600 if args.simulator else 270
    if args.timeout_scale is None:
        args.timeout_scale = 10 if args.simulator else 1
    # A carried folder may lose its modes on the way.
    for folder in ("bin", "lib", "sim"):
        for name in os.listdir(os.path.join(BUNDLE, folder)):
            path = os.path.join(BUNDLE, folder, name)
            mode = os.stat(path).st_mode
            if not mode & stat.S_IXUSR:
                try:
                    os.chmod(path, mode | stat.S_IXUSR | stat.S_IXGRP |
                             stat.S_IXOTH)
                except OSError:
                    pass
    runner = Runner(args)
    devices, probe_output = runner.probe()
    info = runner.machine(devices, probe_output)
    print(f"gpu-check: {info['mode']} run, {devices} device(s) answer, "
          f"budget {args.budget:.0f}s", flush=True)
    items = runner.manifest["items"]
    order = {"test": 0, "sweep": 1, "gtest": 2, "bench": 3}
    items = sorted(items, key=lambda i: order.get(i["kind"], 9))
    runner.run_items(items, devices)
    runner.sanitize(items, devices)
    runner.archive(info)
    return 0


if __name__ == "__main__":
    sys.exit(main())
