"""Replays the pipeline that `etcopy-opt --dump-pass-pipeline` prints.

  replay.py ETCOPY_OPT INPUT PIPELINE_FLAG

Runs ETCOPY_OPT on INPUT with PIPELINE_FLAG (e.g. --etcopy-to-cuda=...)
and --dump-pass-pipeline, then runs the printed pipeline again through
--pass-pipeline, and fails unless both outputs are identical. Prints the
replayed pipeline and the number of output lines.
"""
import subprocess
import sys


def run(command):
    proc = subprocess.run(command, capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"failed ({proc.returncode}): {' '.join(command)}\n"
                 f"{proc.stderr}")
    return proc


def main():
    etcopy_opt, source, flag = sys.argv[1:]
    direct = run([etcopy_opt, source, flag, "--dump-pass-pipeline"])
    # "Pass Manager with N passes:" then the textual pipeline over lines.
    lines = direct.stderr.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Pass Manager"))
    pipeline = "".join(line.strip() for line in lines[start + 1:])
    replayed = run([etcopy_opt, source, "--pass-pipeline=" + pipeline])
    if replayed.stdout != direct.stdout:
        sys.exit("the replayed pipeline gives a different result:\n" + pipeline)
    print(pipeline)
    print(f"identical output: {len(direct.stdout.splitlines())} lines")


if __name__ == "__main__":
    main()
