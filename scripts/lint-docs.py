#!/usr/bin/env python3
"""Docs are code: every name a document or a comment gives as code must exist in the tree.

Checked, in README.md, docs/*.md, conf/README.md, man/* and the comments of *.c, *.h, *.sh,
*.py and the Makefile:
  function  `name()` (or `snake_name(args)` in comments): a token of the tree's code
  file      `name.c` / `.h` / `.sh` / `.py` / `.md`, and paths under a top-level directory of
            the tree (`transports/srp/`, `scripts/vm/*.sh`): a tracked file (globs allowed)
  flag      `--flag` after utgtd, utgtadm or utgt-bench on the same line (in man/PROG.N any
            line that names no other program): that program's option table or a string of
            its sources
  attribute scst.conf statements in the docs' config blocks and the attribute entries of
            man/utgt-scst.conf.5: a keyword of the loader or a string of the config, core
            and transport code (the tables the loader checks against)
and the layering rule common/ <- scsi/ <- transports/ <- target/: no #include of a higher
layer, and no fprintf(stderr) in scsi/ or transports/ (they log through common/ut_log.h).

Names that are not ours (kernel, SCST, libiscsi, fio) go in scripts/lint-docs.allow.
Prints FILE:LINE: KIND 'NAME' ... for each offender; exit status 1 when there is one.

usage: lint-docs.py [--root DIR] [--allow FILE] [EXTRA_DOC...]
EXTRA_DOC: more documents to check against the tree (the lint's own test feeds it one).
"""
import fnmatch
import os
import re
import subprocess
import sys

TOP_DIRS = ("common", "scsi", "transports", "target", "initiator", "tests", "scripts",
            "docs", "man", "dist", "debian", "conf", ".ci")
PROGRAMS = {
    # program: the sources that hold its option table and usage text
    "utgtd": ["target/utgtd_main.c"],
    "utgtadm": ["target/utgtadm_main.c", "target/adm_cli.c"],
    "utgt-bench": ["initiator/*.c"],
}
# Commands that end the flags of a program named before them on the same line.
OTHER_COMMANDS = ("fio", "iscsiadm", "make", "git", "systemctl", "scstadmin", "dpkg",
                  "man", "qemu", "ssh", "sg_", "targetcli", "tgtd", "tgtadm", "iscsi-test-cu",
                  "journalctl", "multipath", "nm", "grep", "flock", "ib_", "rping", "rdma")
LAYERS = ["common", "scsi", "transports", "target"]
EXT_BARE = ("c", "h", "sh", "py", "md")

ident_re = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
func_re = re.compile(r"(?<![\w.>$-])([A-Za-z_][A-Za-z0-9_]*)\(\)")
call_re = re.compile(r"(?<![\w.>$-])([a-z][a-z0-9]*_[a-z0-9_]+)\((?=[\w&*\"])")
path_re = re.compile(r"(?<![\w/.$~:=-])((?:" + "|".join(re.escape(d) for d in TOP_DIRS) +
                     r")/[\w./*{},-]*)")
bare_re = re.compile(r"(?<![\w/.$~*-])([\w-]+\.(?:" + "|".join(EXT_BARE) + r"))(?![\w/])")
flag_re = re.compile(r"(?<![\w-])--([A-Za-z][\w-]*)")
prog_re = re.compile(r"(?<![\w/.-])(utgt-bench|utgtadm|utgtd)(?![\w.-])")


def git_files(root):
    out = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True)
    if out.returncode == 0 and out.stdout.strip():
        return out.stdout.split("\n")[:-1]
    files = []  # not a git checkout (a tarball): every file but build output
    for d, _, fs in os.walk(root):
        rel = os.path.relpath(d, root)
        if rel.split(os.sep)[0] in (".git", "build", "build-asan", "build-fuzz"):
            continue
        files += [os.path.normpath(os.path.join(rel, f)) for f in fs]
    return files


def read(root, f):
    try:
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def c_split(text):
    """(code, [(line, comment text)]) of C source; code keeps line count and strings."""
    code, comments, i, n, line = [], [], 0, len(text), 1
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            comments.append((line, text[i:j]))
            nl = text.count("\n", i, j)
            code.append("\n" * nl)
            line += nl
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            comments.append((line, text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            code.append(text[i:j + 1])
            i = j + 1
        else:
            if c == "\n":
                line += 1
            code.append(c)
            i += 1
    return "".join(code), comments


def hash_split(text):
    """(code, comments) of shell, Python and make files: '#' lines are comments."""
    code, comments = [], []
    for ln, l in enumerate(text.split("\n"), 1):
        s = l.lstrip()
        if s.startswith("#!") and ln == 1:
            continue
        if s.startswith("#"):
            comments.append((ln, s))
        else:
            code.append(l)
    return "\n".join(code), comments


def strings_of(code):
    return set(m.group(1) for m in re.finditer(r'"((?:[^"\\\n]|\\.)*)"', code))


class Tree:
    def __init__(self, root):
        self.root = root
        self.files = [f for f in git_files(root) if f]
        self.fileset = set(self.files)
        self.basenames = set(os.path.basename(f) for f in self.files)
        self.dirs = set()
        for f in self.files:
            d = os.path.dirname(f)
            while d:
                self.dirs.add(d)
                d = os.path.dirname(d)
        self.tokens, self.comments, self.strings = set(), {}, {}
        for f in self.files:
            if f.endswith((".c", ".h")):
                code, com = c_split(read(root, f))
                self.strings[f] = strings_of(code)
            elif f.endswith((".sh", ".py")) or os.path.basename(f) == "Makefile":
                code, com = hash_split(read(root, f))
            else:
                continue
            self.tokens.update(ident_re.findall(code))
            self.comments[f] = com

    def globbed(self, pattern):
        return [f for f in self.files if fnmatch.fnmatch(f, pattern)]

    def path_exists(self, p):
        p = p.rstrip("/.,")
        p = re.sub(r"(?<![A-Za-z])[A-Z][A-Z_]+(?![a-z])", "*", p)  # placeholders: tests/vm/NAME.sh
        if "{" in p:  # a brace list: every alternative
            m = re.match(r"(.*)\{([^}]*)\}(.*)", p)
            if m:
                return all(self.path_exists(m.group(1) + alt + m.group(3))
                           for alt in m.group(2).split(","))
        if p in self.fileset or p in self.dirs or p + ".c" in self.fileset or p + ".h" in self.fileset:
            return True  # a file, a directory or a module (common/ut_log)
        return any(ch in p for ch in "*?") and bool(self.globbed(p) or
                                                    self.globbed(p + "/*"))

    def strings_in(self, patterns):
        s = set()
        for pat in patterns:
            for f in self.globbed(pat):
                s |= self.strings.get(f, set())
        return s


def load_allow(path):
    allow = set()
    for l in open(path, encoding="utf-8") if path and os.path.exists(path) else []:
        l = l.split("#", 1)[0].split()
        if len(l) == 2:
            allow.add((l[0], l[1]))
    return allow


def program_flags(tree):
    flags = {}
    for prog, pats in PROGRAMS.items():
        strs = tree.strings_in(pats)
        ok = set()
        for s in strs:
            ok.update(flag_re.findall(s))
            if re.fullmatch(r"[A-Za-z][\w-]*", s):
                ok.add(s)  # an option table entry: {"state-dir", ...} or {"iodepth", T_UINT}
        flags[prog] = ok
    return flags


def attr_names(tree):
    names = set()
    for s in tree.strings_in(["target/conf_*.c", "transports/*/*.c", "scsi/scsi_dev_config.c",
                              "scsi/scsi_dev_live.c", "scsi/backstore/*.c"]):
        names.add(s.lower())
    return names


class Lint:
    def __init__(self, tree, allow):
        self.t, self.allow, self.bad = tree, allow, []
        self.flags = program_flags(tree)
        self.attrs = attr_names(tree)

    def report(self, f, line, kind, name, why):
        if (kind, name) in self.allow:
            return
        self.bad.append("%s:%d: %s '%s' %s" % (f, line, kind, name, why))

    def names_in_text(self, f, line, text, comment):
        for m in func_re.finditer(text):
            if m.group(1) not in self.t.tokens:
                self.report(f, line, "function", m.group(1) + "()", "is in no code of the tree")
        if comment:
            for m in call_re.finditer(text):
                if m.group(1) not in self.t.tokens:
                    self.report(f, line, "function", m.group(1) + "()",
                                "is in no code of the tree")
        for m in path_re.finditer(text):
            p = m.group(1)
            if "://" in text[max(0, m.start() - 12):m.start()]:
                continue
            if not self.t.path_exists(p):
                self.report(f, line, "file", p.rstrip("/.,"), "does not exist")
        for m in bare_re.finditer(text):
            b = m.group(1)
            if b not in self.t.basenames and not self.t.path_exists(b):
                self.report(f, line, "file", b, "is no file of the tree")

    def flags_in_line(self, f, line, text, default_prog):
        spans = []
        progs = list(prog_re.finditer(text))
        if progs:
            for i, m in enumerate(progs):
                end = progs[i + 1].start() if i + 1 < len(progs) else len(text)
                seg = text[m.end():end]
                stop = re.search(r"[|;`)]|&&|\b(?:%s)" % "|".join(OTHER_COMMANDS), seg)
                spans.append((m.group(1), seg[:stop.start()] if stop else seg))
        elif default_prog and not re.search(r"\b(?:%s)" % "|".join(OTHER_COMMANDS), text):
            spans.append((default_prog, text))
        for prog, seg in spans:
            for fl in flag_re.findall(seg):
                if fl not in self.flags[prog]:
                    self.report(f, line, "flag", "--" + fl, "is not an option of " + prog)

    def check_doc(self, f, text):
        default = None
        if f.startswith("man/") or "/man/" in f:
            base = os.path.basename(f).rsplit(".", 1)[0]
            default = base if base in PROGRAMS else None
            text = man_to_text(text)
        elif os.path.basename(f) == "utgt-bench.md":
            default = "utgt-bench"
        in_block, conf_block, block, attr_table = False, False, [], False
        for ln, l in enumerate(text.split("\n"), 1):
            cells = l.split("|")
            if not l.startswith("|"):
                attr_table = False
            elif re.fullmatch(r"\s*(attribute|setting|limit)\s*", cells[1], re.I):
                attr_table = True
            elif attr_table and not re.fullmatch(r"[\s:-]*", cells[1]):
                for name in re.findall(r"`([A-Za-z_]\w*)", cells[1]):
                    if name.lower() not in self.attrs:
                        self.report(f, ln, "attribute", name, "is not an attribute the "
                                    "configuration code knows")
            if l.lstrip().startswith("```"):
                if in_block and conf_block:
                    self.check_conf_block(f, block)
                in_block, block = not in_block, []
                conf_block = False
                continue
            if in_block:
                block.append((ln, l))
                if re.match(r"\s*(HANDLER|TARGET_DRIVER|DEVICE|TARGET|DEVICE_GROUP)\s+\S+\s*\{",
                            l):
                    conf_block = True
            self.names_in_text(f, ln, l, False)
            self.flags_in_line(f, ln, l, default)
        if os.path.basename(f).startswith("utgt-scst.conf."):
            self.check_man_attrs(f, text)

    def check_conf_block(self, f, block):
        for ln, l in block:
            w = l.split("#", 1)[0].split()
            if not w or not ident_re.fullmatch(w[0]):
                continue
            if w[0].lower() not in self.attrs:
                self.report(f, ln, "attribute", w[0], "is not a keyword or attribute the "
                            "configuration code knows")

    def check_man_attrs(self, f, text):
        lines = text.split("\n")
        for i, l in enumerate(lines):
            if lines[i - 1].strip() == ".TP" and l.startswith((".B ", ".BR ")):
                for name in re.findall(r'(?:^\.BR? |", ")"?([A-Za-z_][\w]*)', l):
                    if name.lower() not in self.attrs:
                        self.report(f, i + 1, "attribute", name, "is not an attribute the "
                                    "configuration code knows")

    def check_comments(self):
        for f, com in self.t.comments.items():
            default = None
            for line, text in com:
                for k, l in enumerate(text.split("\n")):
                    self.names_in_text(f, line + k, l, True)
                    self.flags_in_line(f, line + k, l, default)

    def check_layers(self):
        for f in self.t.files:
            top = f.split("/", 1)[0]
            if top not in LAYERS or not f.endswith((".c", ".h")):
                continue
            above = LAYERS[LAYERS.index(top) + 1:] + ["initiator"]
            code, _ = c_split(read(self.t.root, f))
            for ln, l in enumerate(code.split("\n"), 1):
                m = re.match(r'\s*#\s*include\s+"([\w-]+)/', l)
                if m and m.group(1) in above:
                    self.report(f, ln, "include", m.group(1) + "/",
                                "is a higher layer than %s/ (common/ <- scsi/ <- "
                                "transports/ <- target/)" % top)
                if top in ("scsi", "transports") and "fprintf(stderr" in l:
                    self.report(f, ln, "stderr", "fprintf(stderr", "in %s/: log with "
                                "ut_log() (common/ut_log.h)" % top)


def man_to_text(t):
    t = re.sub(r"\\f[BIRP]|\\f\(..|\\&|\\\(dq", "", t)
    return t.replace("\\-", "-").replace("\\(em", "--")


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    root, allow, extra = os.path.dirname(here), os.path.join(here, "lint-docs.allow"), []
    i = 0
    while i < len(argv):
        if argv[i] == "--root":
            root, i = argv[i + 1], i + 2
        elif argv[i] == "--allow":
            allow, i = argv[i + 1], i + 2
        else:
            extra.append(argv[i])
            i += 1
    tree = Tree(root)
    lint = Lint(tree, load_allow(allow))
    docs = [f for f in tree.files if f == "README.md" or f == "conf/README.md" or
            re.fullmatch(r"docs/[^/]+\.md", f) or re.fullmatch(r"man/[^/]+\.[0-9]", f)]
    for f in docs:
        lint.check_doc(f, read(root, f))
    for f in extra:
        lint.check_doc(f, read(".", f))
    lint.check_comments()
    lint.check_layers()
    for b in lint.bad:
        print(b)
    print("lint-docs: %d documents, %d files' comments, %d offenders" %
          (len(docs) + len(extra), len(tree.comments), len(lint.bad)))
    return 1 if lint.bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
