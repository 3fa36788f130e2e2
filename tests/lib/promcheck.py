#!/usr/bin/env python3
"""promcheck.py [--strict] [--no-promtool] [FILE|-] - checks Prometheus text
exposition format 0.0.4.

Reads FILE (default: standard input). Prints every problem as
"line N: ..." and exits 1 if there is one, 0 otherwise (printing a one-line
summary). When `promtool` is on PATH, `promtool check metrics` judges
instead (unless --no-promtool).

What is checked, beyond the grammar of each line
(`name{label="value",...} value [timestamp]`):
  - metric and label names are valid, label names do not start with "__",
    no label is given twice in one sample;
  - label values use only the escapes \\\\, \\" and \\n;
  - values are Go-style floats (NaN, +Inf, -Inf included), timestamps
    integers;
  - a family's `# TYPE` line comes before its samples and appears only once,
    and `# HELP` at most once;
  - counters end in `_total` and are not negative; histograms and
    summaries carry only their own suffixes;
  - no series (name plus label set) appears twice;
  - the text ends with a newline.
The format also asks that a family's lines form one group (its HELP and
TYPE lines, then its samples, no other family in between). Prometheus
itself scrapes text that interleaves families, so a break in a group is a
warning ("warning: line N: ..."), and an error only with --strict.
"""

import math
import re
import shutil
import subprocess
import sys

METRIC_RE = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL_RE = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
FLOAT_RE = re.compile(
    r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|Inf|inf)$|NaN$"
)
INT_RE = re.compile(r"-?[0-9]+$")
TYPES = ("counter", "gauge", "histogram", "summary", "untyped")
SUFFIXES = {
    "histogram": ("_bucket", "_sum", "_count"),
    "summary": ("_sum", "_count"),
}


class Problems:
    def __init__(self):
        self.items = []
        self.warnings = []

    def add(self, lineno, msg):
        self.items.append("line %d: %s" % (lineno, msg))

    def warn(self, lineno, msg):
        self.warnings.append("line %d: %s" % (lineno, msg))


def parse_labels(text, pos, lineno, probs):
    """Parses '{...}' starting at text[pos] == '{'. Returns (labels, pos
    after '}') or (None, pos) after reporting the problem."""
    labels = []
    pos += 1
    while True:
        while pos < len(text) and text[pos] in " \t":
            pos += 1
        if pos < len(text) and text[pos] == "}":
            return labels, pos + 1
        m = LABEL_RE.match(text, pos)
        if not m:
            probs.add(lineno, "bad label name at column %d" % (pos + 1))
            return None, pos
        name = m.group(0)
        pos = m.end()
        while pos < len(text) and text[pos] in " \t":
            pos += 1
        if pos >= len(text) or text[pos] != "=":
            probs.add(lineno, "expected '=' after label %s" % name)
            return None, pos
        pos += 1
        while pos < len(text) and text[pos] in " \t":
            pos += 1
        if pos >= len(text) or text[pos] != '"':
            probs.add(lineno, "label %s: value must be double-quoted" % name)
            return None, pos
        pos += 1
        value = []
        while True:
            if pos >= len(text):
                probs.add(lineno, "label %s: unterminated value" % name)
                return None, pos
            c = text[pos]
            if c == "\\":
                nxt = text[pos + 1: pos + 2]
                if nxt not in ("\\", '"', "n"):
                    probs.add(
                        lineno,
                        "label %s: bad escape \\%s (only \\\\ \\\" \\n)" % (name, nxt),
                    )
                    return None, pos
                value.append("\n" if nxt == "n" else nxt)
                pos += 2
                continue
            if c == '"':
                pos += 1
                break
            value.append(c)
            pos += 1
        if name.startswith("__"):
            probs.add(lineno, "label %s: names starting with __ are reserved" % name)
        labels.append((name, "".join(value)))
        while pos < len(text) and text[pos] in " \t":
            pos += 1
        if pos < len(text) and text[pos] == ",":
            pos += 1
            continue
        if pos < len(text) and text[pos] == "}":
            return labels, pos + 1
        probs.add(lineno, "expected ',' or '}' after label %s" % name)
        return None, pos


def family_of(name, types):
    """The family a sample name belongs to: itself, or a histogram or
    summary whose TYPE line named the name without its suffix."""
    if name in types:
        return name
    for suffixes_of in ("histogram", "summary"):
        for suf in SUFFIXES[suffixes_of]:
            if name.endswith(suf):
                base = name[: -len(suf)]
                if types.get(base) in ("histogram", "summary"):
                    return base
    return name


def check(text, strict=False):
    """Returns (problems, warnings, samples, families)."""
    probs = Problems()
    grouping = probs.add if strict else probs.warn
    types = {}  # family -> type
    helps = set()
    seen_series = {}  # (name, frozenset labels) -> line
    sampled = set()  # sample names seen
    finished = set()  # families whose group has ended
    current = None  # family of the last sample or TYPE/HELP line
    samples = 0

    if text and not text.endswith("\n"):
        probs.add(text.count("\n") + 1, "text does not end with a newline")

    for lineno, line in enumerate(text.split("\n"), 1):
        if line.strip() == "":
            continue
        if line.startswith("#"):
            parts = line.split(None, 3)
            if len(parts) >= 2 and parts[1] in ("TYPE", "HELP"):
                if len(parts) < 3:
                    probs.add(lineno, "# %s without a metric name" % parts[1])
                    continue
                fam = parts[2]
                if not METRIC_RE.fullmatch(fam):
                    probs.add(lineno, "bad metric name %r" % fam)
                    continue
                if fam != current and fam in finished:
                    grouping(lineno, "family %s continues after other families" % fam)
                if current is not None and fam != current:
                    finished.add(current)
                current = fam
                if parts[1] == "TYPE":
                    if len(parts) < 4 or parts[3].strip() not in TYPES:
                        probs.add(lineno, "# TYPE %s: type must be one of %s" % (fam, ", ".join(TYPES)))
                        continue
                    if fam in types:
                        probs.add(lineno, "second # TYPE line for %s" % fam)
                        continue
                    t = parts[3].strip()
                    if any(n in sampled for n in [fam] + [fam + s for s in SUFFIXES.get(t, ())]):
                        probs.add(lineno, "# TYPE %s comes after its samples" % fam)
                    types[fam] = t
                    if t == "counter" and not fam.endswith("_total"):
                        probs.add(lineno, "counter %s does not end in _total" % fam)
                else:
                    if fam in helps:
                        probs.add(lineno, "second # HELP line for %s" % fam)
                    helps.add(fam)
                    escapes = re.findall(r"\\(.?)", parts[3] if len(parts) > 3 else "")
                    if any(e not in ("\\", "n") for e in escapes):
                        probs.add(lineno, "# HELP %s: bad escape (only \\\\ and \\n)" % fam)
            continue

        m = METRIC_RE.match(line)
        if not m:
            probs.add(lineno, "bad metric name at the start of %r" % line[:60])
            continue
        name = m.group(0)
        pos = m.end()
        labels = []
        if pos < len(line) and line[pos] == "{":
            labels, pos = parse_labels(line, pos, lineno, probs)
            if labels is None:
                continue
        rest = line[pos:]
        if not rest[:1] in (" ", "\t"):
            probs.add(lineno, "expected a blank after %s" % name)
            continue
        fields = rest.split()
        if len(fields) not in (1, 2):
            probs.add(lineno, "expected 'value [timestamp]', got %r" % rest.strip())
            continue
        if not FLOAT_RE.match(fields[0]):
            probs.add(lineno, "value %r is not a number" % fields[0])
            continue
        if len(fields) == 2 and not INT_RE.match(fields[1]):
            probs.add(lineno, "timestamp %r is not an integer" % fields[1])
        samples += 1
        sampled.add(name)

        names = [k for k, _ in labels]
        dups = sorted({k for k in names if names.count(k) > 1})
        if dups:
            probs.add(lineno, "label %s given twice" % ", ".join(dups))

        fam = family_of(name, types)
        ftype = types.get(fam)
        if ftype is None:
            probs.add(lineno, "%s has no # TYPE line before it" % name)
        elif ftype == "counter":
            v = float(fields[0].replace("Inf", "inf"))
            if v < 0 or math.isnan(v):
                probs.add(lineno, "counter %s has value %s" % (name, fields[0]))
        if ftype in SUFFIXES and name == fam:
            probs.add(lineno, "%s sample %s lacks a %s suffix" % (ftype, name, "/".join(SUFFIXES[ftype])))
        if fam != current:
            if fam in finished:
                grouping(lineno, "samples of %s are not contiguous (other families in between)" % fam)
            if current is not None:
                finished.add(current)
            current = fam

        key = (name, frozenset(labels))
        if key in seen_series:
            probs.add(lineno, "series %s%s repeats line %d" % (
                name, "{" + ",".join('%s="%s"' % kv for kv in sorted(labels)) + "}",
                seen_series[key]))
        else:
            seen_series[key] = lineno

    return probs.items, probs.warnings, samples, len(types)


def main(argv):
    use_promtool = True
    strict = False
    args = []
    for a in argv[1:]:
        if a == "--no-promtool":
            use_promtool = False
        elif a == "--strict":
            strict = True
        elif a in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        else:
            args.append(a)
    path = args[0] if args else "-"
    if path == "-":
        data = sys.stdin.buffer.read()
    else:
        with open(path, "rb") as f:
            data = f.read()

    promtool = shutil.which("promtool") if use_promtool else None
    if promtool:
        p = subprocess.run([promtool, "check", "metrics"], input=data,
                           capture_output=True)
        sys.stdout.write(p.stdout.decode("utf-8", "replace"))
        sys.stdout.write(p.stderr.decode("utf-8", "replace"))
        print("promcheck: promtool check metrics: %s" % ("ok" if p.returncode == 0 else "FAILED"))
        return 0 if p.returncode == 0 else 1

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        print("not UTF-8: %s" % e)
        return 1
    problems, warnings, samples, families = check(text, strict)
    for w in warnings[:5]:
        print("warning: " + w)
    if len(warnings) > 5:
        print("warning: ... %d more like these" % (len(warnings) - 5))
    for p in problems:
        print(p)
    if problems:
        print("promcheck: %d problem(s) in %d sample(s)" % (len(problems), samples))
        return 1
    print("promcheck: ok, %d sample(s) in %d famil%s" % (
        samples, families, "y" if families == 1 else "ies"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
