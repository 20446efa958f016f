# SPDX-License-Identifier: GPL-2.0
# The one comparison of a hist file with an rhist file (or of any two
# files in hist's format), used wherever C is the oracle:
#
#   awk -f hist_same.awk C_FILE RHIST_FILE
#
# Exits 0 when they agree, else 1 with the first difference on stdout.
# Lines outside entries (headers, trigger info, totals) must be equal, in
# order. An entry is its "{" line and the lines after it up to the next
# "{", blank or "#" line: a stack trace key's frames, its "} hitcount:"
# line, and the "max:"/"changed:" line of onmax()/onchange() with its
# saved fields stay with their key. Entries must come in the same order,
# but for one thing C leaves undefined: among consecutive entries whose
# sort keys (the "sort=" of the histogram's trigger info line, hitcount
# by default) print the same, the order is its hash table's. A sort key
# an entry does not show (or this script cannot find) makes that entry
# its own group: no order is forgiven there.
#
# The callers map what differs by design first (hist's "# trigger info:
# hist:" against "rhist:", a test's event names).
#
#   awk -v canon=1 -f hist_same.awk [FILE]
#
# prints FILE in the normal form of that rule instead: each group of
# consecutive entries whose sort keys print the same sorted by its text,
# all else as it is; two files agree if and only if their normal forms
# are equal. A line starting with "\001 " or "\002" starts a new file
# (the sequence fuzzer's record holds many, between such lines).

function trim(s) {
	sub(/^[ \t]+/, "", s)
	sub(/[ \t]+$/, "", s)
	return s
}

# field(TEXT, NAME): how NAME prints in the entry TEXT, or "" if it is
# not there. A name starts the entry ("{ name:"), follows ", " (keys) or
# spaces (values, hitcount); its value ends at the next field or at "}".
function field(text, name,   rest, p, c, e, v) {
	rest = text
	while ((p = index(rest, name ":")) > 0) {
		c = p > 1 ? substr(rest, p - 1, 1) : ""
		rest = substr(rest, p + length(name) + 1)
		if (c != "" && c != " " && c != "\t")
			continue
		v = rest
		e = length(v) + 1
		if (match(v, /, [A-Za-z_][A-Za-z0-9_.]*: /) && RSTART < e)
			e = RSTART
		if (match(v, /}/) && RSTART < e)
			e = RSTART
		if (match(v, /[^ ]  +[A-Za-z_][A-Za-z0-9_.]*: /) && RSTART + 1 < e)
			e = RSTART + 1
		if (match(v, /\n/) && RSTART < e)
			e = RSTART
		return "=" trim(substr(v, 1, e - 1))
	}
	return ""
}

# signature(TEXT): the entry's sort keys as printed, or the entry itself.
function signature(text,   i, v, s) {
	s = ""
	for (i = 1; i <= nsort; i++) {
		v = field(text, sortkey[i])
		if (v == "")
			return "entry:" text
		s = s "\001" v
	}
	return s
}

# sortkeys(LINE): the sort keys of a "# trigger info:" line.
function sortkeys(line,   s, n, i, a) {
	nsort = 0
	s = "hitcount"
	if (match(line, /:sort=[^: ]*/))
		s = substr(line, RSTART + 6, RLENGTH - 6)
	n = split(s, a, ",")
	for (i = 1; i <= n; i++) {
		sub(/\..*/, "", a[i])
		sortkey[++nsort] = a[i]
	}
}

# add(F, KIND, TEXT, LINE): item n[F] of file F.
function add(f, kind, text, line) {
	k = ++n[f]
	kinds[f, k] = kind
	texts[f, k] = text
	lines[f, k] = line
	sigs[f, k] = kind == "E" ? signature(text) : ""
}

function flush(f) {
	if (entry != "")
		add(f, "E", entry, entryline)
	entry = ""
}

FNR == 1 || (canon && /^[\001\002]/) {
	if (NR > 1)
		flush(f)
	if (!canon || f == 0)
		f++
	nsort = 1
	sortkey[1] = "hitcount"
}
/^# trigger info:/ { sortkeys($0) }
/^\{/ {
	flush(f)
	entry = $0
	entryline = FNR
	next
}
entry != "" && $0 != "" && !/^#/ {
	entry = entry "\n" $0
	next
}
{
	flush(f)
	add(f, "L", $0, FNR)
}

function show(f, k,   name) {
	name = f == 1 ? "C" : "rhist"
	if (k > n[f]) {
		print "  " name ": (end of file)"
		return
	}
	print "  " name " line " lines[f, k] ":"
	print texts[f, k]
}

function differ(i, j, why) {
	print "hist_same: " why
	show(1, i)
	show(2, j)
	exit 1
}

# print_canon(): file 1 in normal form.
function print_canon(   i, a, b, c, t) {
	i = 1
	while (i <= n[1]) {
		if (kinds[1, i] == "L") {
			print texts[1, i++]
			continue
		}
		for (a = i; a <= n[1] && kinds[1, a] == "E" && sigs[1, a] == sigs[1, i]; a++)
			;
		# Insertion sort: a group is a few entries.
		for (b = i + 1; b < a; b++) {
			t = texts[1, b]
			for (c = b - 1; c >= i && texts[1, c] > t; c--)
				texts[1, c + 1] = texts[1, c]
			texts[1, c + 1] = t
		}
		for (b = i; b < a; b++)
			print texts[1, b]
		i = a
	}
}

END {
	flush(f)
	if (canon) {
		print_canon()
		exit 0
	}
	if (f != 2) {
		print "hist_same: two files expected"
		exit 2
	}
	i = 1
	j = 1
	while (i <= n[1] || j <= n[2]) {
		if (i > n[1] || j > n[2])
			differ(i, j, "one file ends first")
		if (kinds[1, i] == "L" || kinds[2, j] == "L") {
			if (kinds[1, i] != kinds[2, j] || texts[1, i] != texts[2, j])
				differ(i, j, "lines differ")
			i++
			j++
			continue
		}
		# A group of entries of equal sort keys in C's file, and as many
		# of the same keys in rhist's, the same entries in any order.
		s = sigs[1, i]
		for (a = i; a <= n[1] && kinds[1, a] == "E" && sigs[1, a] == s; a++)
			count[texts[1, a]]++
		for (b = j; b < j + (a - i); b++) {
			if (b > n[2] || kinds[2, b] != "E" || sigs[2, b] != s)
				differ(i, b, "entries differ, or come in another order")
			if (!(texts[2, b] in count) || count[texts[2, b]] == 0)
				differ(i, b, "entries differ, or come in another order")
			count[texts[2, b]]--
		}
		for (t in count)
			delete count[t]
		i = a
		j = b
	}
	exit 0
}
