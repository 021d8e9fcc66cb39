#!/usr/bin/env bash
# What one translation unit of tessera costs to compile: for each source given (default: the
# README's program, the SpDNN example's spmm and spgemm units, test_spmm), the compile command of
# a configured build is run again alone, and one JSON line per translation unit goes to stdout and to OUT (default
# bench/results/compile-times-<date>.jsonl): wall and CPU seconds, peak memory, preprocessed lines,
# and g++'s -ftime-report phases (the template instantiation share among them). A source given as
# FILE#MACRO picks the compile command of FILE that defines MACRO (one file, several targets):
# tests/docs/readme_program.cpp#TESSERA_USE_INSTANTIATIONS is the README program linked to
# tessera::instantiations (a build configured with -DTESSERA_INSTANTIATIONS=ON).
#
#   tools/compile-times.sh [-b BUILD_DIR] [-o OUT] [-q] [source.cpp ...]
#
# -q: no phase breakdown (one compile per unit instead of two).
#
# Needs a configured build (cmake --preset dev or release: compile_commands.json). Run it on an
# idle machine: the figures are of one core.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build/dev"
out="$root/bench/results/compile-times-$(date +%F).jsonl"
phases=1
while getopts "b:o:q" opt; do
  case $opt in
    b) build="$(cd "$OPTARG" && pwd)" ;;
    o) out="$OPTARG" ;;
    q) phases=0 ;;
    *) echo "usage: $0 [-b BUILD_DIR] [-o OUT] [-q] [source.cpp ...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
sources=("$@")
if [ ${#sources[@]} -eq 0 ]; then
  sources=(tests/docs/readme_program.cpp examples/spdnn/mode_dense.cpp examples/spdnn/mode_sparse.cpp tests/mpi/test_spmm.cpp)
fi
[ -f "$build/compile_commands.json" ] || { echo "no $build/compile_commands.json: configure first" >&2; exit 2; }
command -v /usr/bin/time >/dev/null || { echo "needs GNU time (apt-get install time)" >&2; exit 2; }
mkdir -p "$(dirname "$out")"
python3 - "$root" "$build" "$out" "$phases" "${sources[@]}" <<'PY'
import json, os, re, shlex, subprocess, sys, tempfile, time
root, build, out, sources = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[5:]
phases_wanted = sys.argv[4] == "1"
commands = json.load(open(os.path.join(build, "compile_commands.json")))
compiler_version = ""
for source in sources:
    file_name, _, macro = source.partition("#")
    path = os.path.realpath(os.path.join(root, file_name))
    def command_of(c):
        return c["command"] if "command" in c else " ".join(c["arguments"])
    entry = next((c for c in commands if os.path.realpath(c["file"]) == path
                  and (("-D" + macro) in command_of(c) if macro else not any(
                      m in command_of(c) for m in ("-DTESSERA_DOCS_README_PROGRAM", "-DTESSERA_USE_INSTANTIATIONS")))), None)
    if entry is None:
        print(f"compile-times: {source} is not in {build}/compile_commands.json (not a target of this build)", file=sys.stderr)
        continue
    args = shlex.split(entry["command"]) if "command" in entry else entry["arguments"]
    if "-o" in args:
        i = args.index("-o"); del args[i:i + 2]
    if not compiler_version:
        compiler_version = subprocess.run([args[0], "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    with tempfile.TemporaryDirectory() as tmp:
        obj = os.path.join(tmp, "tu.o")
        timing = os.path.join(tmp, "time.txt")
        # What a user pays: the plain compile, timed. -ftime-report's own bookkeeping costs up to
        # 80% more, so the phase breakdown comes from a second, untimed compile.
        start = time.time()
        run = subprocess.run(["/usr/bin/time", "-v", "-o", timing] + args + ["-o", obj],
                             cwd=entry["directory"], capture_output=True, text=True)
        wall = time.time() - start
        if run.returncode != 0:
            print(f"compile-times: {source} failed to compile:\n{run.stderr[-2000:]}", file=sys.stderr)
            continue
        report = subprocess.run(args + ["-ftime-report", "-o", obj], cwd=entry["directory"], capture_output=True,
                                text=True) if phases_wanted else None
        # g++ 12 can crash in its own timers (-ftime-report) on some concept checks: then no breakdown.
        timed = report is not None and report.returncode == 0
        t = open(timing).read()
        user = float(re.search(r"User time \(seconds\): ([\d.]+)", t).group(1))
        system = float(re.search(r"System time \(seconds\): ([\d.]+)", t).group(1))
        rss_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", t).group(1))
        # g++ -ftime-report: "phase ... : usr ... wall ..." lines; keep the phases and the largest passes.
        phases, passes = {}, []
        for line in (report.stderr if timed else "").splitlines():
            m = re.match(r"\s*(phase [a-z ]+?|[A-Za-z][^:]{2,40}?)\s*:\s*([\d.]+)\s*\(\s*\d+%\)\s*([\d.]+)", line)
            if not m:
                continue
            name, usr = m.group(1).strip(), float(m.group(2))
            if name.startswith("phase "):
                phases[name[6:]] = usr
            else:
                passes.append((usr, name))
        passes.sort(reverse=True)
        pre = subprocess.run(args + ["-E", "-o", "-"], cwd=entry["directory"], capture_output=True, text=True)
        lines = pre.stdout.count("\n")
        tessera_lines = 0
        current = ""
        for line in pre.stdout.splitlines():
            if line.startswith("# "):
                parts = line.split('"')
                current = parts[1] if len(parts) > 1 else current
            elif "/include/tessera/" in current:
                tessera_lines += 1
    record = {"bench": "compile_time", "source": source, "compiler": compiler_version,
              "build": os.path.basename(build.rstrip("/")), "wall_seconds": round(wall, 2),
              "cpu_seconds": round(user + system, 2), "peak_rss_mb": round(rss_kb / 1024, 1),
              "preprocessed_lines": lines, "tessera_lines": tessera_lines,
              "phases_seconds": phases if timed else None,
              "top_passes": [{"pass": n, "seconds": s} for s, n in passes[:6]] if timed else None,
              "date": time.strftime("%Y-%m-%d")}
    text = json.dumps(record)
    print(text)
    with open(out, "a") as f:
        f.write(text + "\n")
PY
