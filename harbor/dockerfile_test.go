package harbor

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseDockerfile(t *testing.T) {
	src := "# escape=\\\n" +
		"FROM --platform=linux/amd64 debian:bookworm-slim AS build\n" +
		"\n" +
		"LABEL a=b\n" +
		"ENV A=1 B=\"two words\" C='$A' D=\\$A\n" +
		"ENV LEGACY some value\n" +
		"WORKDIR /app\n" +
		"COPY --chown=1000:1000 a.txt b/ ./dst/\n" +
		"COPY [\"x y\", \"/z\"]\n" +
		"RUN set -e; \\\n" +
		"  # comment\n" +
		"  echo hi\n" +
		"RUN [\"/bin/echo\", \"exec\"]\n" +
		"ENTRYPOINT [\"sh\"]\n"
	d, err := ParseDockerfile("Dockerfile", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := &Dockerfile{
		From: "debian:bookworm-slim",
		Steps: []Step{
			{Line: 5, Op: "ENV", Env: [][2]string{{"A", "1"}, {"B", "two words"}, {"C", `\$A`}, {"D", `\$A`}}},
			{Line: 6, Op: "ENV", Env: [][2]string{{"LEGACY", "some value"}}},
			{Line: 7, Op: "WORKDIR", Dir: "/app"},
			{Line: 8, Op: "COPY", Sources: []string{"a.txt", "b/"}, Dest: "./dst/", Chown: "1000:1000"},
			{Line: 9, Op: "COPY", Sources: []string{"x y"}, Dest: "/z"},
			{Line: 10, Op: "RUN", Shell: "set -e;  echo hi"},
			{Line: 13, Op: "RUN", Exec: []string{"/bin/echo", "exec"}},
		},
		Ignored: []string{"line 4: LABEL", "line 14: ENTRYPOINT"},
	}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("got\n%+v\nwant\n%+v", d, want)
	}
}

func TestParseDockerfileRefuses(t *testing.T) {
	cases := []struct{ src, want string }{
		{"RUN echo\n", "line 1: RUN: expected FROM first"},
		{"FROM a\nFROM b\n", "line 2: FROM: a second FROM"},
		{"FROM a\nADD x.tar /\n", "line 2: ADD: cannot be replayed"},
		{"FROM a\nARG V=1\n", "line 2: ARG: cannot be replayed"},
		{"FROM a\nUSER app\n", "line 2: USER: cannot be replayed"},
		{"FROM a\nCOPY --from=build /x /y\n", "line 2: COPY: option --from=build"},
		{"FROM a\nRUN --mount=type=cache,target=/c true\n", "line 2: RUN: option --mount"},
		{"FROM a\nCOPY <<EOF /x\nhi\nEOF\n", "here-document"},
		{"FROM a\nRUN cat > /x <<'EOF'\nno end\n", "has no closing line"},
		{"FROM a\nCOPY onlyone\n", "expected COPY SOURCE... DEST"},
		{"FROM a\nENV \"unterminated=1\n", "unterminated"},
		{"FROM ${BASE}\n", "build argument"},
		{"# just a comment\n", "no FROM"},
		{"# escape=x\nFROM a\n", "escape directive"},
	}
	for _, c := range cases {
		_, err := ParseDockerfile("env/Dockerfile", []byte(c.src))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "env/Dockerfile") {
			t.Errorf("%q: got %v, want an error naming the file with %q", c.src, err, c.want)
		}
	}
}

func TestExpand(t *testing.T) {
	env := map[string]string{"A": "1", "PATH": "/usr/bin", "E": ""}
	cases := map[string]string{
		"$A":                  "1",
		"${A}x":               "1x",
		"/x:$PATH":            "/x:/usr/bin",
		"${NOPE:-dflt}":       "dflt",
		"${E:-dflt}":          "dflt",
		"${A:+set}${NOPE:+x}": "set",
		`\$A`:                 "$A",
		"$":                   "$",
		"cost $5":             "cost $5",
		"${unclosed":          "${unclosed",
	}
	for in, want := range cases {
		if got := Expand(in, env); got != want {
			t.Errorf("Expand(%q) = %q, want %q", in, got, want)
		}
	}
}

// Here-documents of a RUN (BuildKit's syntax, common in generated
// tasks) are given whole to the shell; instructions go on after them.
func TestParseDockerfileHeredocs(t *testing.T) {
	src := "FROM a\n" +
		"RUN cat > /app/t.py << 'EOF'\n" +
		"# not a comment of the Dockerfile\n" +
		"COPY is not an instruction here\n" +
		"EOF\n" +
		"RUN cat <<-END > /x && echo $((1<<2))\n" +
		"\tindented\n" +
		"\tEND\n" +
		"WORKDIR /app\n"
	d, err := ParseDockerfile("Dockerfile", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Steps) != 3 || d.Steps[2].Op != "WORKDIR" || d.Steps[2].Line != 9 {
		t.Fatalf("steps: %+v", d.Steps)
	}
	if want := "cat > /app/t.py << 'EOF'\n# not a comment of the Dockerfile\nCOPY is not an instruction here\nEOF"; d.Steps[0].Shell != want {
		t.Errorf("first RUN: %q, want %q", d.Steps[0].Shell, want)
	}
	if want := "cat <<-END > /x && echo $((1<<2))\n\tindented\n\tEND"; d.Steps[1].Shell != want {
		t.Errorf("second RUN: %q, want %q", d.Steps[1].Shell, want)
	}
}
