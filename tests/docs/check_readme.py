#!/usr/bin/env python3
"""Checks that the README's code blocks run as written, and that the relative
links of README.md and docs/*.md resolve (ctest docs.*, label unit).

Every fenced block of README.md is classified by its language:

  c        written to app.c, compiled (-std=c99 -Wall -Wextra -pedantic
           -Werror) against the built libfdk and run; it must exit 0
  cmake    a consumer project: the block is its CMakeLists.txt and the C
           block before it its app.c, configured and built against this
           build installed into a temporary prefix (components runtime,
           frames, development: files copied, nothing compiled again), then
           the program run
  sh       either the two long commands (every line `bash scripts/X.sh`):
           each script must exist and parse (bash -n), test.sh must be what
           .ci/run runs, run-sample.sh must write out/sample/slice_NNNN.tif
           and out/sample/preview.png; or any other block, run with bash -e
           in a scratch folder where build/ is this build and app.c the C
           block, with PKG_CONFIG_PATH and the library path set to the
           temporary prefix
  python   run with FDK_CT_LIBRARY set to the built libfdk and PYTHONPATH
           to bindings/python/src (skipped, with its reason, when no Python
           with numpy is given or fdk_ct cannot load libfdk)
  csharp   compiled with mcs together with bindings/csharp/src/*.cs, then
           run with mono (skipped, with its reason, without mcs)

A block with another language, no language, or an indented code block fails
every kind's check: a new block must be given a kind here first.

Usage: check_readme.py KIND --source DIR [--build DIR --lib FILE --work DIR
         --cc CC --cmake CMAKE --python PY --mcs MCS --mono MONO --tools ON|OFF]
KIND: links, blocks (classification only), c, cmake, shell, python, csharp.
Exit 0 passed, 1 failed, 77 skipped (the reason printed).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time
import unicodedata

SKIP = 77
LANG_KIND = {"c": "c", "cmake": "cmake", "sh": "shell", "python": "python", "csharp": "csharp"}
LONG_LINE = re.compile(r"^bash (scripts/[\w.-]+\.sh)$")


class Block:
    def __init__(self, line, lang, text):
        self.line, self.lang, self.text = line, lang, text
        self.kind = LANG_KIND.get(lang)
        if self.kind == "shell" and self.is_long():
            self.kind = "long"

    def commands(self):
        out = []
        for raw in self.text.splitlines():
            cmd = raw.split("#", 1)[0].strip()
            if cmd:
                out.append(cmd)
        return out

    def is_long(self):
        cmds = self.commands()
        return bool(cmds) and all(LONG_LINE.match(c) for c in cmds)

    def where(self):
        return f"README.md:{self.line} ({self.lang or 'no language'})"


def parse_blocks(path):
    """Fenced blocks, and the errors: unclosed fences, indented code blocks."""
    blocks, errors = [], []
    lines = open(path, encoding="utf-8").read().split("\n")
    i, in_list = 0, False
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^(\s*)(```+|~~~+)\s*([\w+#-]*)\s*$", line)
        if m:
            fence, lang, start = m.group(2), m.group(3).lower(), i + 1
            body = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(fence):
                body.append(lines[i][len(m.group(1)):] if lines[i].startswith(m.group(1)) else lines[i])
                i += 1
            if i == len(lines):
                errors.append(f"README.md:{start}: unclosed code fence")
            blocks.append(Block(start, lang, "\n".join(body) + "\n"))
            i += 1
            continue
        if re.match(r"^\s*([-*+]|\d+\.)\s", line):
            in_list = True
        elif not line.strip():
            pass
        elif not line.startswith(" "):
            in_list = False
        prev_blank = i == 0 or not lines[i - 1].strip()
        if prev_blank and not in_list and (line.startswith("    ") or line.startswith("\t")) and line.strip():
            errors.append(f"README.md:{i + 1}: an indented code block; fence it with a language "
                          f"(c, cmake, sh, python, csharp) so that it is checked")
        i += 1
    return blocks, errors


def classify(blocks, parse_errors):
    errors = list(parse_errors)
    for b in blocks:
        if b.kind is None:
            errors.append(f"{b.where()}: unclassified code block; give it one of the languages "
                          f"{', '.join(sorted(LANG_KIND))} or teach tests/docs/check_readme.py its kind")
    return errors


def run(cmd, cwd=None, env=None, timeout=180, show=True):
    t0 = time.monotonic()
    p = subprocess.run(cmd, cwd=cwd, env=env, timeout=timeout, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, shell=isinstance(cmd, str))
    if show:
        shown = cmd if isinstance(cmd, str) else " ".join(cmd)
        print(f"$ {shown}   [{time.monotonic() - t0:.1f} s, exit {p.returncode}]")
        if p.stdout.strip():
            tail = p.stdout.strip().split("\n")
            print("\n".join("  " + l for l in tail[-15:]))
    return p


# ---- links -------------------------------------------------------------------
def slug(heading):
    """GitHub's anchor for a heading."""
    heading = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip()).lower()
    kept = [ch for ch in heading
            if ch in " -" or unicodedata.category(ch)[0] in "LMN" or unicodedata.category(ch) == "Pc"]
    return "".join(kept).replace(" ", "-")


def anchors(path):
    seen, out, fenced = {}, set(), False
    for line in open(path, encoding="utf-8"):
        if re.match(r"^\s*(```|~~~)", line):
            fenced = not fenced
            continue
        m = None if fenced else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            s = slug(m.group(1))
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else f"{s}-{n}")
    return out


def check_links(source):
    files = [os.path.join(source, "README.md")]
    docs = os.path.join(source, "docs")
    files += sorted(os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md"))
    errors, count = [], 0
    link = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
    for f in files:
        fenced = False
        for n, line in enumerate(open(f, encoding="utf-8"), 1):
            if re.match(r"^\s*(```|~~~)", line):
                fenced = not fenced
            if fenced:
                continue
            for target in link.findall(re.sub(r"`[^`]*`", "", line)):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, mailto:, ...
                    continue
                count += 1
                path, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
                rel = os.path.relpath(f, source)
                if not os.path.exists(dest):
                    errors.append(f"{rel}:{n}: link to {target}: no such file")
                elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                    errors.append(f"{rel}:{n}: link to {target}: no heading with that anchor")
    print(f"{count} relative links in {len(files)} files")
    return errors


# ---- the kinds ---------------------------------------------------------------
def c_before(blocks, b):
    prior = [x for x in blocks if x.kind == "c" and x.line < b.line]
    return prior[-1] if prior else next((x for x in blocks if x.kind == "c"), None)


def lib_dir(a):
    return os.path.dirname(os.path.abspath(a.lib))


def install_prefix(a, work):
    prefix = os.path.join(work, "prefix")
    shutil.rmtree(prefix, ignore_errors=True)
    for comp in ("runtime", "frames", "development"):
        p = run([a.cmake, "--install", a.build, "--prefix", prefix, "--component", comp], show=False)
        if p.returncode != 0:
            raise RuntimeError(f"cmake --install {a.build} --component {comp} failed:\n{p.stdout}")
    print(f"installed this build's runtime, frames and development components into {prefix}")
    return prefix


def check_c(a, blocks, work):
    errors = []
    for k, b in enumerate(x for x in blocks if x.kind == "c"):
        d = os.path.join(work, f"c{k}")
        os.makedirs(d, exist_ok=True)
        open(os.path.join(d, "app.c"), "w").write(b.text)
        p = run([a.cc, "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", "app.c", "-o", "app",
                 f"-I{os.path.join(a.source, 'capi', 'include')}", f"-L{lib_dir(a)}", "-lfdk", "-lm",
                 f"-Wl,-rpath,{lib_dir(a)}"], cwd=d)
        if p.returncode != 0:
            errors.append(f"{b.where()}: does not compile")
            continue
        p = run(["./app"], cwd=d)
        if p.returncode != 0:
            errors.append(f"{b.where()}: exits {p.returncode}")
    return errors


def check_cmake(a, blocks, work):
    errors = []
    cmake_blocks = [x for x in blocks if x.kind == "cmake"]
    if not cmake_blocks:
        return errors
    prefix = install_prefix(a, work)
    for k, b in enumerate(cmake_blocks):
        c = c_before(blocks, b)
        if c is None:
            errors.append(f"{b.where()}: a CMake block needs a C block for its app.c")
            continue
        d = os.path.join(work, f"cmake{k}")
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        open(os.path.join(d, "CMakeLists.txt"), "w").write(b.text)
        open(os.path.join(d, "app.c"), "w").write(c.text)
        gen = ["-G", "Ninja"] if shutil.which("ninja") else []
        p = run([a.cmake, "-S", d, "-B", os.path.join(d, "build"), *gen,
                 f"-DCMAKE_PREFIX_PATH={prefix}", f"-DCMAKE_C_COMPILER={a.cc}"])
        if p.returncode != 0:
            errors.append(f"{b.where()}: does not configure against {prefix}")
            continue
        p = run([a.cmake, "--build", os.path.join(d, "build")])
        if p.returncode != 0:
            errors.append(f"{b.where()}: does not build")
            continue
        exe = [os.path.join(d, "build", f) for f in os.listdir(os.path.join(d, "build"))
               if os.path.isfile(os.path.join(d, "build", f)) and os.access(os.path.join(d, "build", f), os.X_OK)]
        if len(exe) != 1:
            errors.append(f"{b.where()}: expected one program, found {exe}")
            continue
        p = run([exe[0]], cwd=d)
        if p.returncode != 0:
            errors.append(f"{b.where()}: its program exits {p.returncode}")
    return errors


def check_long(a, blocks):
    errors = []
    ci = open(os.path.join(a.source, ".ci", "run"), encoding="utf-8").read()
    readme = open(os.path.join(a.source, "README.md"), encoding="utf-8").read()
    found = set()
    for b in (x for x in blocks if x.kind == "long"):
        for cmd in b.commands():
            script = LONG_LINE.match(cmd).group(1)
            found.add(script)
            path = os.path.join(a.source, script)
            if not os.path.isfile(path):
                errors.append(f"{b.where()}: `{cmd}`: no {script}")
                continue
            if run(["bash", "-n", path], show=False).returncode != 0:
                errors.append(f"{b.where()}: `{cmd}`: {script} does not parse (bash -n)")
            print(f"{cmd}: {script} exists and parses")
    if found != {"scripts/run-sample.sh", "scripts/test.sh"}:
        errors.append(f"README.md: the long commands are {sorted(found)}, expected "
                      "scripts/run-sample.sh and scripts/test.sh")
    if not re.search(r"^\s*(\w+=\S*\s+)*bash scripts/test\.sh\b", ci, re.M):
        errors.append(".ci/run does not run `bash scripts/test.sh`, the README's test command")
    sample = open(os.path.join(a.source, "scripts", "run-sample.sh"), encoding="utf-8").read()
    for needle in ("out/sample", "slice_NNNN.tif", "preview.png"):
        if needle not in sample:
            errors.append(f"scripts/run-sample.sh no longer mentions {needle}")
        if needle not in readme:
            errors.append(f"README.md no longer says that run-sample.sh writes {needle}")
    if not errors:
        print("the long commands are those of .ci/run (test.sh) and scripts/run-sample.sh")
    return errors


def check_shell(a, blocks, work):
    errors, skipped, ran = [], [], 0
    shell = [x for x in blocks if x.kind == "shell"]
    d = os.path.join(work, "shell")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    os.symlink(os.path.abspath(a.build), os.path.join(d, "build"))
    prefix = None
    env = dict(os.environ)
    for b in shell:
        needs_tools = "build/tools/" in b.text
        needs_pkgconfig = "pkg-config" in b.text
        if needs_tools and a.tools != "ON":
            skipped.append(f"{b.where()}: skipped: this build has no fdk-convert (FDK_BUILD_TOOLS or FDK_WITH_TIFF off)")
            continue
        if needs_pkgconfig and not shutil.which("pkg-config"):
            skipped.append(f"{b.where()}: skipped: no pkg-config on this machine")
            continue
        if needs_pkgconfig or "app.c" in b.text:
            c = c_before(blocks, b)
            if c is not None:
                open(os.path.join(d, "app.c"), "w").write(c.text)
        if needs_pkgconfig and prefix is None:
            prefix = install_prefix(a, work)
            env["PKG_CONFIG_PATH"] = os.path.join(prefix, "lib", "pkgconfig")
            env["LIBRARY_PATH"] = os.path.join(prefix, "lib")
            env["LD_LIBRARY_PATH"] = os.path.join(prefix, "lib")
        print(f"-- {b.where()}")
        p = run(["bash", "-e", "-o", "pipefail", "-c", b.text], cwd=d, env=env)
        ran += 1
        if p.returncode != 0:
            errors.append(f"{b.where()}: exits {p.returncode}")
        elif needs_pkgconfig and os.path.isfile(os.path.join(d, "app")):
            q = run(["./app"], cwd=d, env=env)
            if q.returncode != 0:
                errors.append(f"{b.where()}: the program it built exits {q.returncode}")
    for s in skipped:
        print(s)
    return errors, ran


def check_python(a, blocks, work):
    py = [x for x in blocks if x.kind == "python"]
    if not py:
        return [], 0, None
    if not a.python:
        return [], 0, "skipped: no Python with numpy (install python3-numpy)"
    env = dict(os.environ, FDK_CT_LIBRARY=os.path.abspath(a.lib), PYTHONDONTWRITEBYTECODE="1",
               PYTHONPATH=os.path.join(a.source, "bindings", "python", "src"))
    probe = run([a.python, "-c", "import fdk_ct; print('fdk_ct loads libfdk', fdk_ct.library_version())"],
                env=env, show=False)
    if probe.returncode != 0:
        return [], 0, "skipped: fdk_ct cannot load libfdk here:\n" + probe.stdout.strip()[-800:]
    print(probe.stdout.strip())
    errors = []
    for k, b in enumerate(py):
        f = os.path.join(work, f"block{k}.py")
        open(f, "w").write(b.text)
        p = run([a.python, f], cwd=work, env=env)
        if p.returncode != 0:
            errors.append(f"{b.where()}: exits {p.returncode}")
    return errors, len(py), None


def check_csharp(a, blocks, work):
    cs = [x for x in blocks if x.kind == "csharp"]
    if not cs:
        return [], 0, None
    if not a.mcs:
        return [], 0, "skipped: no mcs (Mono's C# compiler; Debian's mono-devel, as .ci/packaging.sh installs)"
    src = os.path.join(a.source, "bindings", "csharp", "src")
    sources = sorted(os.path.join(src, f) for f in os.listdir(src) if f.endswith(".cs"))
    errors = []
    for k, b in enumerate(cs):
        f = os.path.join(work, f"block{k}.cs")
        exe = os.path.join(work, f"block{k}.exe")
        open(f, "w").write(b.text)
        p = run([a.mcs, "-nologo", "-unsafe", "-langversion:7.2", "-warnaserror+", "-target:exe",
                 f"-out:{exe}", *sources, f])
        if p.returncode != 0:
            errors.append(f"{b.where()}: does not compile with the binding's sources")
            continue
        if a.mono:
            env = dict(os.environ, LD_LIBRARY_PATH=lib_dir(a))
            p = run([a.mono, exe], cwd=work, env=env)
            if p.returncode != 0:
                errors.append(f"{b.where()}: exits {p.returncode} under mono")
        else:
            print(f"{b.where()}: compiled; not run (no mono)")
    return errors, len(cs), None


def _unset(v):
    return "" if not v or v.endswith("-NOTFOUND") else v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=["links", "blocks", "c", "cmake", "shell", "python", "csharp"])
    ap.add_argument("--source", required=True)
    ap.add_argument("--build")
    ap.add_argument("--lib")
    ap.add_argument("--work")
    ap.add_argument("--cc", default="cc")
    ap.add_argument("--cmake", default="cmake")
    ap.add_argument("--python", default="")
    ap.add_argument("--mcs", default="")
    ap.add_argument("--mono", default="")
    ap.add_argument("--tools", default="OFF")
    a = ap.parse_args()
    a.source = os.path.abspath(a.source)
    a.python, a.mcs, a.mono = _unset(a.python), _unset(a.mcs), _unset(a.mono)
    for name in ("build", "lib"):
        if getattr(a, name):
            setattr(a, name, os.path.abspath(getattr(a, name)))
    t0 = time.monotonic()

    if a.kind == "links":
        errors = check_links(a.source)
    else:
        blocks, parse_errors = parse_blocks(os.path.join(a.source, "README.md"))
        errors = classify(blocks, parse_errors)
        kinds = {}
        for b in blocks:
            kinds.setdefault(b.kind, []).append(b.line)
        print("README.md blocks: " + ", ".join(f"{k} at lines {v}" for k, v in kinds.items() if k))
        if errors:
            pass
        elif a.kind == "blocks":
            errors = check_long(a, blocks)
        else:
            work = os.path.abspath(a.work)
            os.makedirs(work, exist_ok=True)
            if a.kind == "c":
                errors = check_c(a, blocks, work)
            elif a.kind == "cmake":
                errors = check_cmake(a, blocks, work)
            elif a.kind == "shell":
                errors, ran = check_shell(a, blocks, work)
                if not errors and ran == 0 and any(b.kind == "shell" for b in blocks):
                    print("skipped: no shell block could run here (see above)")
                    return SKIP
            else:
                check = check_python if a.kind == "python" else check_csharp
                errors, ran, reason = check(a, blocks, work)
                if reason:
                    print(reason)
                    return SKIP
    for e in errors:
        print("FAILED: " + e)
    print(f"docs check '{a.kind}': {'failed' if errors else 'passed'} in {time.monotonic() - t0:.1f} s")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
