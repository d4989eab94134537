package evaluator

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
)

// The Go side of the detector: each carried Go file is parsed with
// go/parser (never built), its imports give calls their packages' paths,
// and what a package's init functions and package-level variables'
// initialisers do is followed through the package's functions, across
// its carried files. Code there runs in the test binary before any test.

// goPkg is one folder's carried Go files: its functions and what runs at
// initialisation.
type goPkg struct {
	funcs map[string]*goFunc
	roots []*goFunc
}

// goFunc is what a function (or an init, or a variable's initialiser)
// does, and which of its package's functions it calls.
type goFunc struct {
	rel     string
	name    string // "init", "var x", or the function's name
	line    int
	effects []goEffect
	calls   map[string]int // name -> line
}

// goEffect is one thing a function does that counts when it runs at
// initialisation.
type goEffect struct {
	flag, what string
	rel        string
	line       int
}

func (fn *goFunc) effect(flag, what string, line int) {
	fn.effects = append(fn.effects, goEffect{flag: flag, what: what, rel: fn.rel, line: line})
}

// Names the Go side looks for, by import path and name.
var (
	goExits = map[string]bool{"os.Exit": true, "syscall.Exit": true, "runtime.Goexit": true, "log.Fatal": true, "log.Fatalf": true,
		"log.Fatalln": true, "syscall.Kill": true, "golang.org/x/sys/unix.Exit": true, "golang.org/x/sys/unix.Kill": true}
	goSpawns = map[string]bool{"os/exec.Command": true, "os/exec.CommandContext": true, "syscall.Exec": true, "syscall.ForkExec": true,
		"syscall.StartProcess": true, "os.StartProcess": true, "golang.org/x/sys/unix.Exec": true}
	goReads = map[string]bool{"os.ReadFile": true, "os.Open": true, "os.OpenFile": true, "os.ReadDir": true, "os.DirFS": true,
		"os.Readlink": true, "io/ioutil.ReadFile": true, "io/ioutil.ReadDir": true, "path/filepath.Walk": true,
		"path/filepath.WalkDir": true, "path/filepath.Glob": true, "io/fs.ReadFile": true, "io/fs.ReadDir": true,
		"io/fs.WalkDir": true, "io/fs.Glob": true, "syscall.Open": true, "syscall.Openat": true, "syscall.Read": true,
		"debug/elf.Open": true, "debug/buildinfo.ReadFile": true}
	goWrites = map[string]bool{"fmt.Print": true, "fmt.Printf": true, "fmt.Println": true, "log.Print": true, "log.Printf": true,
		"log.Println": true, "log.Fatal": true, "log.Fatalf": true, "log.Fatalln": true, "log.Panic": true, "log.Panicf": true,
		"log.Panicln": true, "print": true, "println": true}
	// goConfigures take a stream to write to later: handing them
	// os.Stderr writes nothing.
	goConfigures = map[string]bool{"log.New": true, "log.SetOutput": true, "log/slog.NewTextHandler": true,
		"log/slog.NewJSONHandler": true, "flag.CommandLine.SetOutput": true}
)

// scanGo flags one Go file and adds its functions to its package.
func (d *flagDetector) scanGo(rel string, src []byte) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, rel, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil || file == nil {
		// It does not build, so it runs nowhere; its text is still read.
		scanScriptText(d.col, d.known, rel, src, "//")
		return
	}
	dir := path.Dir(rel)
	pkg := d.pkgs[dir]
	if pkg == nil {
		pkg = &goPkg{funcs: map[string]*goFunc{}}
		d.pkgs[dir] = pkg
	}
	g := &goFile{d: d, rel: rel, fset: fset, imports: map[string]string{}, sums: map[*ast.BinaryExpr]bool{}}
	isTest := strings.HasSuffix(rel, "_test.go")
	for _, spec := range file.Imports {
		p, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			continue
		}
		local := goImportName(p)
		if spec.Name != nil {
			local = spec.Name.Name
		}
		g.imports[local] = p
		line := fset.Position(spec.Pos()).Line
		switch {
		case p == "C":
			d.col.add(FlagCompiledCode, rel, line, `import "C": C code built into the package, which may run before any Go code`)
		case p == "testing" && !isTest:
			d.col.add(FlagDetectsTestRun, rel, line, `imports "testing" in a file that is not a test`)
		}
	}
	if imported := slices.Collect(maps.Values(g.imports)); !isTest && slices.Contains(imported, "testing") && slices.Contains(imported, "unsafe") {
		d.col.add(FlagPatchesTests, rel, 1, `imports "testing" and "unsafe" together`)
	}
	for _, cg := range file.Comments {
		for _, c := range cg.List {
			g.directive(c)
		}
	}
	for _, decl := range file.Decls {
		switch decl := decl.(type) {
		case *ast.FuncDecl:
			fn := &goFunc{rel: rel, name: decl.Name.Name, line: fset.Position(decl.Pos()).Line, calls: map[string]int{}}
			if decl.Body != nil {
				g.walk(decl.Body, fn)
			}
			switch {
			case decl.Recv != nil:
			case decl.Name.Name == "init":
				pkg.roots = append(pkg.roots, fn)
			case decl.Name.Name == "TestMain" && isTest:
				g.testMain(decl)
				pkg.funcs[fn.name] = fn
			default:
				pkg.funcs[fn.name] = fn
			}
		case *ast.GenDecl:
			if decl.Tok == token.IMPORT {
				continue
			}
			for _, spec := range decl.Specs {
				vs, ok := spec.(*ast.ValueSpec)
				if !ok {
					ast.Inspect(spec, g.literal)
					continue
				}
				fn := &goFunc{rel: rel, name: "var " + vs.Names[0].Name, line: fset.Position(vs.Pos()).Line, calls: map[string]int{}}
				for _, v := range vs.Values {
					g.walk(v, fn)
				}
				if vs.Type != nil {
					ast.Inspect(vs.Type, g.literal)
				}
				if decl.Tok == token.VAR && len(vs.Values) > 0 {
					pkg.roots = append(pkg.roots, fn)
				}
			}
		}
	}
}

// goStdStream reports whether a name is standard output or error.
func goStdStream(name string) bool { return name == "os.Stdout" || name == "os.Stderr" }

// goImportName is the name a package is imported by when the import does
// not name it: its path's last element, without a version.
func goImportName(p string) string {
	base := path.Base(p)
	if strings.HasPrefix(base, "v") && len(base) > 1 && strings.Trim(base[1:], "0123456789") == "" {
		base = path.Base(path.Dir(p))
	}
	if i := strings.Index(base, ".v"); i > 0 {
		base = base[:i]
	}
	base = strings.TrimPrefix(base, "go-")
	return strings.ReplaceAll(base, "-", "_")
}

// goFile is the state of reading one Go file.
type goFile struct {
	d       *flagDetector
	rel     string
	fset    *token.FileSet
	imports map[string]string // local name -> import path
	sums    map[*ast.BinaryExpr]bool
}

func (g *goFile) line(n ast.Node) int { return g.fset.Position(n.Pos()).Line }

// directive flags //go:linkname, and //go:embed of test files.
func (g *goFile) directive(c *ast.Comment) {
	line := g.line(c)
	switch {
	case strings.HasPrefix(c.Text, "//go:linkname"):
		g.d.col.add(FlagLinkname, g.rel, line, strings.TrimSpace(c.Text))
		if strings.Contains(c.Text, " testing.") || strings.Contains(c.Text, " runtime.") {
			g.d.col.add(FlagPatchesTests, g.rel, line, "reaches into "+strings.Fields(c.Text)[len(strings.Fields(c.Text))-1]+" through //go:linkname")
		}
	case strings.HasPrefix(c.Text, "//go:embed"):
		for _, pat := range strings.Fields(c.Text)[1:] {
			pat = strings.TrimPrefix(strings.Trim(pat, "\"`"), "all:")
			if pat == "." || pat == "*" || goMatch(pat, "x_test.go") || goMatch(pat, "test_x.py") || g.d.known.namesFile(pat) || g.d.known.files[pat] {
				g.d.col.add(FlagReadsTests, g.rel, line, "embeds "+pat+", which takes in test files")
			}
		}
	}
}

func goMatch(pattern, name string) bool {
	ok, err := path.Match(pattern, name)
	return err == nil && ok
}

// testMain flags a carried TestMain that never runs the tests.
func (g *goFile) testMain(decl *ast.FuncDecl) {
	if decl.Type.Params == nil || len(decl.Type.Params.List) != 1 || len(decl.Type.Params.List[0].Names) != 1 || decl.Body == nil {
		return
	}
	m := decl.Type.Params.List[0].Names[0].Name
	runs := false
	ast.Inspect(decl.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok && id.Name == m && n.Sel.Name == "Run" {
				runs = true
			}
		case *ast.CallExpr:
			// os.Exit(0) whatever m.Run said.
			if name := g.name(n.Fun); (name == "os.Exit" || name == "syscall.Exit") && len(n.Args) == 1 {
				if lit, ok := n.Args[0].(*ast.BasicLit); ok && lit.Value == "0" {
					g.d.col.add(FlagPatchesTests, g.rel, g.line(n), "a TestMain that exits 0 whatever the tests did")
				}
			}
		}
		return true
	})
	if !runs {
		g.d.col.add(FlagPatchesTests, g.rel, g.line(decl), "a TestMain that never calls "+m+".Run: no test runs")
	}
}

// name gives a called or referenced expression its full name: the import
// path and the selectors ("os/exec.Command", "os.Stdout.Write"), or a
// bare identifier's name; "" for anything else.
func (g *goFile) name(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		if id, ok := e.X.(*ast.Ident); ok {
			if p, ok := g.imports[id.Name]; ok {
				return p + "." + e.Sel.Name
			}
			return ""
		}
		if inner := g.name(e.X); strings.Contains(inner, ".") {
			return inner + "." + e.Sel.Name
		}
	case *ast.ParenExpr:
		return g.name(e.X)
	}
	return ""
}

// walk reads a function's body (or an initialiser) into fn: what it does
// that counts at initialisation, calls of the package's functions; and
// flags what counts wherever it is (literals, re-executions, the test
// flags).
func (g *goFile) walk(body ast.Node, fn *goFunc) {
	spawn, self := 0, ""
	ast.Inspect(body, func(n ast.Node) bool {
		g.literal(n)
		switch n := n.(type) {
		case *ast.CallExpr:
			name := g.name(n.Fun)
			line := g.line(n)
			if id, ok := n.Fun.(*ast.Ident); ok {
				if _, ok := fn.calls[id.Name]; !ok {
					fn.calls[id.Name] = line
				}
			}
			// Writes to standard output or error: a method of os.Stdout
			// (Write, WriteString), or os.Stdout handed to a call (an
			// Fprintf, an encoder), unless the call only sets up a
			// logger.
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && goStdStream(g.name(sel.X)) {
				fn.effect(FlagInitWritesOutput, g.name(sel.X)+"."+sel.Sel.Name, line)
			}
			if !goConfigures[name] {
				for _, a := range n.Args {
					if s := g.name(a); goStdStream(s) {
						fn.effect(FlagInitWritesOutput, s+" handed to "+cmp.Or(name, "a call"), line)
					}
				}
			}
			switch {
			case goExits[name]:
				fn.effect(FlagExitAtImport, name, line)
			case goSpawns[name]:
				fn.effect(FlagSpawnAtImport, name, line)
				if spawn == 0 {
					spawn = line
				}
			case goReads[name]:
				fn.effect(FlagInitReadsFiles, name, line)
			case goWrites[name]:
				fn.effect(FlagInitWritesOutput, name, line)
			case name == "syscall.Write" || name == "os.NewFile":
				if len(n.Args) > 0 {
					if lit, ok := n.Args[0].(*ast.BasicLit); ok && (lit.Value == "1" || lit.Value == "2") {
						fn.effect(FlagInitWritesOutput, name+"("+lit.Value+", ...)", line)
					}
				}
			case name == "syscall.Dup2" || name == "syscall.Dup3" || name == "golang.org/x/sys/unix.Dup2" || name == "golang.org/x/sys/unix.Dup3":
				fn.effect(FlagInitWritesOutput, name+" (standard output or error redirected)", line)
			case name == "os.Executable":
				self = name
			case name == "plugin.Open":
				g.d.col.add(FlagDynamicCode, g.rel, line, "calls plugin.Open")
			case name == "testing.Testing":
				g.d.col.add(FlagDetectsTestRun, g.rel, line, "calls testing.Testing")
			case name == "testing.MainStart" || name == "testing.Main" || name == "testing.RunTests" || name == "testing.Init":
				g.d.col.add(FlagPatchesTests, g.rel, line, "calls "+name)
			case name == "flag.Set" || name == "flag.CommandLine.Set" || name == "flag.Lookup" || name == "flag.CommandLine.Lookup":
				if len(n.Args) > 0 {
					if s, ok := goString(n.Args[0]); ok && strings.HasPrefix(s, "test.") {
						flag := FlagDetectsTestRun
						if strings.HasSuffix(name, ".Set") {
							flag = FlagPatchesTests
						}
						g.d.col.add(flag, g.rel, line, name+"("+strconv.Quote(s)+")")
					}
				}
			}
		case *ast.AssignStmt:
			// os.Args or the flag set replaced: the test binary's own
			// flags (-test.run) are read from them.
			for _, l := range n.Lhs {
				if name := g.name(l); name == "os.Args" || name == "flag.CommandLine" {
					g.d.col.add(FlagPatchesTests, g.rel, g.line(n), "assigns to "+name+", where the test binary reads its flags")
				}
			}
		case *ast.IndexExpr:
			if lit, ok := n.Index.(*ast.BasicLit); ok && lit.Value == "0" && g.name(n.X) == "os.Args" {
				self = "os.Args[0]"
			}
		case *ast.BasicLit:
			if s, ok := goString(n); ok && s == "/proc/self/exe" {
				self = s
			}
		}
		return true
	})
	if spawn != 0 && self != "" {
		g.d.col.add(FlagReexec, g.rel, spawn, fmt.Sprintf("starts a process in %s, which also uses %s: its own binary again", fn.name, self))
	}
}

// literal flags a string literal, and a sum of them read as one.
func (g *goFile) literal(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.BasicLit:
		if s, ok := goString(n); ok {
			textFlags(g.d.col, g.d.known, g.rel, g.line(n), s)
		}
	case *ast.BinaryExpr:
		if n.Op == token.ADD && !g.sums[n] {
			g.sum(n)
		}
	}
	return true
}

// sum reads a sum of string literals ("bench-" + "canary-") as one
// string. Every + of it is marked read, so that a long sum is read once,
// not once per +.
func (g *goFile) sum(n *ast.BinaryExpr) {
	var parts []string
	ok := true
	stack := []ast.Expr{n}
	for len(stack) > 0 {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch e := e.(type) {
		case *ast.BinaryExpr:
			if e.Op != token.ADD {
				ok = false
				continue
			}
			g.sums[e] = true
			stack = append(stack, e.Y, e.X) // X first
		case *ast.ParenExpr:
			stack = append(stack, e.X)
		case *ast.BasicLit:
			s, good := goString(e)
			parts = append(parts, s)
			ok = ok && good
		default:
			ok = false
		}
	}
	if ok && len(parts) > 1 {
		textFlags(g.d.col, g.d.known, g.rel, g.line(n), strings.Join(parts, ""))
	}
}

// goString is the value of a string literal.
func goString(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// finish flags what the package's inits and variables' initialisers do,
// themselves (where they do it) or through the package's functions they
// call (at the call).
func (p *goPkg) finish(col *flagCollector) {
	for _, root := range p.roots {
		for _, e := range root.effects {
			col.add(e.flag, root.rel, e.line, e.what+" in "+root.name)
		}
		seen := map[string]bool{}
		for _, name := range slices.Sorted(maps.Keys(root.calls)) {
			fn := p.funcs[name]
			if fn == nil || seen[name] {
				continue
			}
			seen[name] = true
			for _, e := range p.reach(fn, seen) {
				col.add(e.flag, root.rel, root.calls[name], fmt.Sprintf("%s calls %s(), which reaches %s (%s:%d)", root.name, name, e.what, e.rel, e.line))
			}
		}
	}
}

// reach gives the effects a function has or reaches through the
// package's functions it calls, the first of each flag.
func (p *goPkg) reach(fn *goFunc, seen map[string]bool) []goEffect {
	var out []goEffect
	has := map[string]bool{}
	add := func(e goEffect) {
		if !has[e.flag] {
			has[e.flag] = true
			out = append(out, e)
		}
	}
	for _, e := range fn.effects {
		add(e)
	}
	for _, name := range slices.Sorted(maps.Keys(fn.calls)) {
		g := p.funcs[name]
		if g == nil || seen[name] {
			continue
		}
		seen[name] = true
		for _, e := range p.reach(g, seen) {
			add(e)
		}
	}
	return out
}
