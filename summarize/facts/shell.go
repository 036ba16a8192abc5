package facts

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/compactkit/compact"
)

// FileOpKind says what a command did to a file.
type FileOpKind int

// The kinds of file operation a shell command line can show.
const (
	// FileRead is a file read: cat, head, tail, less, more, nl, bat, the
	// source of cp, an input redirection (< file).
	FileRead FileOpKind = iota
	// FileWritten is a file created or overwritten: an output redirection
	// (>, >>, >|, &>, &>>), the target of tee, touch, cp and mv.
	FileWritten
	// FileEdited is a file changed in place (sed -i, perl -i), removed
	// (rm, rmdir, unlink, git rm) or moved away (the sources of mv and
	// git mv).
	FileEdited
)

// FileOp is one file a shell command line touched, as written in the
// command: nothing is resolved (a relative path stays relative to the
// directory the command ran in, a glob and ~ stay as they are), so the
// path is found again in the command it came from.
type FileOp struct {
	Path string
	Kind FileOpKind
}

// Shell is what one reading of a shell command line finds.
type Shell struct {
	// Files are the file operations (see ShellFileOps).
	Files []FileOp
	// ReadOnly is Inspection's answer.
	ReadOnly bool
}

// ParseShell reads a shell command line once for both ShellFileOps and
// Inspection.
func ParseShell(command string) Shell {
	r := &shellReader{seen: make(map[FileOp]bool), readOnly: true}
	parser := syntax.NewParser(syntax.Variant(syntax.LangBash))
	if f, err := parser.Parse(strings.NewReader(command), ""); err == nil {
		r.walk(f)
		return Shell{Files: r.ops, ReadOnly: r.readOnly && len(f.Stmts) > 0}
	}
	for line := range strings.SplitSeq(command, "\n") {
		if f, err := parser.Parse(strings.NewReader(line), ""); err == nil {
			r.walk(f)
		}
	}
	return Shell{Files: r.ops}
}

// ShellFileOps reads the file operations of a shell command line: the
// files that redirections, heredoc-fed commands (cat > f <<EOF), mv, cp,
// rm, touch, tee, sed -i and perl -i write or change, and the files that
// cat, head, tail and friends, cp and "<" read. Words that are not plain
// text to the shell (a variable, a command substitution) are skipped, as
// are /dev/ files. A line the shell parser refuses is read line by line,
// skipping the lines it still refuses. Operations come in the order of
// the command line, each path and kind once.
func ShellFileOps(command string) []FileOp { return ParseShell(command).Files }

// AddShellFiles records the file operations of a shell command line in
// ops: reads in ops.Read, writes in ops.Written, in-place changes,
// removals and moves in ops.Edited.
func AddShellFiles(ops *compact.FileOps, command string) {
	AddFileOps(ops, ShellFileOps(command))
}

// AddFileOps records file operations in ops, as AddShellFiles does.
func AddFileOps(ops *compact.FileOps, files []FileOp) {
	for _, op := range files {
		set := &ops.Read
		switch op.Kind {
		case FileWritten:
			set = &ops.Written
		case FileEdited:
			set = &ops.Edited
		}
		if *set == nil {
			*set = make(map[string]bool)
		}
		(*set)[op.Path] = true
	}
}

// shellReader collects the file operations of one command line.
type shellReader struct {
	ops  []FileOp
	seen map[FileOp]bool
	// readOnly stays true while every command only reads.
	readOnly bool
}

func (r *shellReader) add(p string, kind FileOpKind) {
	if p == "" || p == "-" || p == "." || p == ".." || strings.HasPrefix(p, "/dev/") {
		return
	}
	op := FileOp{Path: p, Kind: kind}
	if !r.seen[op] {
		r.seen[op] = true
		r.ops = append(r.ops, op)
	}
}

func (r *shellReader) walk(f *syntax.File) {
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Redirect:
			r.redirect(n)
			if t, ok := literal(n.Word); n.Word != nil && writeRedirect(n.Op) && (!ok || !strings.HasPrefix(t, "/dev/")) {
				r.readOnly = false
			}
		case *syntax.CallExpr:
			r.call(n)
			if r.readOnly && !readerCall(n) {
				r.readOnly = false
			}
		case *syntax.FuncDecl:
			r.readOnly = false
		}
		return true
	})
}

func (r *shellReader) redirect(rd *syntax.Redirect) {
	if rd.Word == nil {
		return
	}
	target, ok := literal(rd.Word)
	if !ok {
		return
	}
	switch {
	case writeRedirect(rd.Op):
		r.add(target, FileWritten)
	case rd.Op == syntax.RdrIn:
		r.add(target, FileRead)
	}
}

// call reads one simple command.
func (r *shellReader) call(c *syntax.CallExpr) {
	words := make([]string, len(c.Args))
	lit := make([]bool, len(c.Args))
	for i, w := range c.Args {
		words[i], lit[i] = literal(w)
	}
	if len(words) == 0 || !lit[0] {
		return
	}
	name := words[0][strings.LastIndexByte(words[0], '/')+1:]
	args, argLit := words[1:], lit[1:]
	if (name == "sudo" || name == "command" || name == "exec") && len(args) > 0 && argLit[0] {
		name, args, argLit = args[0][strings.LastIndexByte(args[0], '/')+1:], args[1:], argLit[1:]
	}
	if name == "git" && len(args) > 0 && (args[0] == "mv" || args[0] == "rm") {
		name, args, argLit = "git "+args[0], args[1:], argLit[1:]
	}
	operands := func(valued string) []string { return operands(args, argLit, valued) }
	switch name {
	case "cat", "less", "more", "nl", "bat", "tac":
		for _, p := range operands("") {
			r.add(p, FileRead)
		}
	case "head", "tail":
		for _, p := range operands("nc") {
			r.add(p, FileRead)
		}
	case "mv", "git mv", "cp":
		ops := operands("tS")
		if len(ops) < 2 {
			return
		}
		src := FileEdited
		if name == "cp" {
			src = FileRead
		}
		for _, p := range ops[:len(ops)-1] {
			r.add(p, src)
		}
		r.add(ops[len(ops)-1], FileWritten)
	case "rm", "rmdir", "unlink", "git rm":
		for _, p := range operands("") {
			r.add(p, FileEdited)
		}
	case "touch", "tee":
		for _, p := range operands("dtr") {
			r.add(p, FileWritten)
		}
	case "sed", "gsed":
		r.sedInPlace(args, argLit)
	case "perl":
		r.perlInPlace(args, argLit)
	}
}

// sedInPlace records the files of "sed -i": the operands after the
// script (the first operand, unless -e or -f gave it). GNU sed's -i takes
// its suffix in the same word (-i.bak); BSD sed takes it as the next word,
// often empty (-i ”), which is told apart by being empty or starting
// with a dot.
func (r *shellReader) sedInPlace(args []string, lit []bool) {
	inPlace, script := false, false
	var files []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case !lit[i]:
			if script {
				files = append(files, "")
			}
			script = true
		case a == "-i" || a == "--in-place" || a == "-I":
			inPlace = true
			if i+1 < len(args) && lit[i+1] && (args[i+1] == "" || strings.HasPrefix(args[i+1], ".")) {
				i++
			}
		case strings.HasPrefix(a, "--in-place="), strings.HasPrefix(a, "-i"):
			inPlace = true
		case a == "-e" || a == "-f" || a == "--expression" || a == "--file":
			script = true
			i++
		case strings.HasPrefix(a, "-") && len(a) > 1 && !strings.HasPrefix(a, "--"):
			if strings.Contains(a, "i") {
				inPlace = true
			}
			if strings.ContainsAny(a, "ef") {
				script = true
				if strings.HasSuffix(a, "e") || strings.HasSuffix(a, "f") {
					i++
				}
			}
		case strings.HasPrefix(a, "--"):
		case !script:
			script = true
		default:
			files = append(files, a)
		}
	}
	if !inPlace {
		return
	}
	for _, f := range files {
		r.add(f, FileEdited)
	}
}

// perlInPlace records the files of "perl -i -pe SCRIPT FILES".
func (r *shellReader) perlInPlace(args []string, lit []bool) {
	inPlace := false
	var files []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case lit[i] && strings.HasPrefix(a, "-") && len(a) > 1:
			if strings.Contains(a, "i") {
				inPlace = true
			}
			if strings.HasSuffix(a, "e") || strings.HasSuffix(a, "E") {
				i++ // the script
			}
		case lit[i]:
			files = append(files, a)
		}
	}
	if inPlace {
		for _, f := range files {
			r.add(f, FileEdited)
		}
	}
}

// operands returns the words of args that are not options, "" for those
// that are not plain text (which add skips). The
// one-letter options listed in valued take the next word as their value
// (head -n 20); everything after "--" is an operand.
func operands(args []string, lit []bool, valued string) []string {
	var out []string
	dash := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case !lit[i]:
			out = append(out, "") // an operand, but not plain text
		case dash:
			out = append(out, a)
		case a == "--":
			dash = true
		case strings.HasPrefix(a, "-") && len(a) > 1:
			if len(a) == 2 && strings.ContainsRune(valued, rune(a[1])) {
				i++
			}
		default:
			out = append(out, a)
		}
	}
	return out
}

// literal returns the text of a word when it is plain text to the shell:
// unquoted text (escapes removed), single-quoted text, and double-quoted
// text without expansions. ok is false for a word with a parameter, a
// command substitution or any other expansion.
func literal(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			b.WriteString(unescape(p.Value))
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(l.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// unescape removes the backslashes of unquoted text ("a\ b" is "a b").
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// readers are the programs that only look at things.
var readers = map[string]bool{
	"ls": true, "cat": true, "head": true, "tail": true, "grep": true, "egrep": true, "fgrep": true, "rg": true,
	"ag": true, "find": true, "fd": true, "sed": true, "awk": true, "wc": true, "echo": true, "pwd": true,
	"which": true, "file": true, "stat": true, "tree": true, "less": true, "more": true, "diff": true, "du": true,
	"df": true, "ps": true, "env": true, "printenv": true, "type": true, "date": true, "whoami": true, "jq": true,
	"sort": true, "uniq": true, "cut": true, "xxd": true, "od": true, "hexdump": true, "cd": true, "true": true,
	"nl": true, "realpath": true, "basename": true, "dirname": true, "printf": true, "test": true, "[": true,
	"bat": true, "tac": true, "tr": true, "column": true,
}

// gitReaders are the git subcommands that only look at things.
var gitReaders = map[string]bool{
	"status": true, "diff": true, "log": true, "show": true, "branch": true, "blame": true, "grep": true,
	"ls-files": true, "rev-parse": true, "remote": true,
}

// Inspection reports whether a shell command line only looks at things:
// every program in it is a reader (ls, cat, grep, sed without -i, find
// without -delete or -exec, git status/diff/log, ...), and no output is
// redirected to a file. A line the shell parser refuses is no inspection.
func Inspection(command string) bool { return ParseShell(command).ReadOnly }

// readerCall reports whether a simple command only reads.
func readerCall(c *syntax.CallExpr) bool {
	if len(c.Args) == 0 {
		return true
	}
	words := make([]string, 0, len(c.Args))
	for _, w := range c.Args {
		s, _ := literal(w)
		words = append(words, s)
	}
	switch name := words[0][strings.LastIndexByte(words[0], '/')+1:]; {
	case name == "git":
		return len(words) > 1 && gitReaders[words[1]]
	case name == "sed" || name == "find":
		for _, a := range words[1:] {
			if strings.HasPrefix(a, "-i") || a == "--in-place" || a == "-delete" || a == "-exec" || a == "-execdir" {
				return false
			}
		}
		return true
	}
	return readers[words[0][strings.LastIndexByte(words[0], '/')+1:]]
}

func writeRedirect(op syntax.RedirOperator) bool {
	switch op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll, syntax.AppAll,
		syntax.RdrAllClob, syntax.AppAllClob, syntax.RdrInOut:
		return true
	}
	return false
}
