"""Measures what one more group of independent-groups.py costs in lowered
code (usage: code-size.py OURS_N1 OURS_N2 UPSTREAM_N1 UPSTREAM_N2 N1 N2,
each file the lowering of N1 or N2 groups): lines, symbols and bytes per
group of both lowerings, whether ours is at most upstream's in bytes, and
every pure value of any function of ours that nothing uses."""
import re
import sys


def read(path):
    with open(path) as f:
        return f.read()


def functions(text):
    """The text of each llvm.func with a body."""
    return re.findall(r"^  llvm\.func [^\n]*\{\n.*?^  \}$", text,
                      re.MULTILINE | re.DOTALL)


def dead_values(text):
    """Values defined by ops other than calls (which have effects) that are
    never used in their function."""
    dead = []
    for body in functions(text):
        name = re.match(r"  llvm\.func [^@]*@([\w.$]+)", body).group(1)
        for value in re.findall(r"^\s+(%[\w.$]+) = (?!llvm\.call )", body,
                                re.MULTILINE):
            if len(re.findall(re.escape(value) + r"(?![\w.$])", body)) < 2:
                dead.append(f"{name}: {value}")
    return dead


def symbols(text):
    return len(re.findall(r"^  (?:llvm\.func|llvm\.mlir\.global) ", text,
                          re.MULTILINE))


def per_group(small, large, groups):
    return {"lines": (large.count("\n") - small.count("\n")) / groups,
            "symbols": (symbols(large) - symbols(small)) / groups,
            "bytes": (len(large) - len(small)) / groups}


ours_small, ours_large, up_small, up_large = map(read, sys.argv[1:5])
groups = int(sys.argv[6]) - int(sys.argv[5])
ours = per_group(ours_small, ours_large, groups)
upstream = per_group(up_small, up_large, groups)
for name, figures in (("ours", ours), ("upstream", upstream)):
    print(f"{name}: " + " ".join(f"{key}={value:.1f}"
                                 for key, value in figures.items()))
print("ours within upstream's bytes:",
      "yes" if ours["bytes"] <= upstream["bytes"] else "no")
for value in dead_values(ours_small) + dead_values(ours_large):
    print(f"dead value: {value}")
print("done")
