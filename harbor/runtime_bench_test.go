package harbor

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/benchhq/bench/image"
)

// The figures of docs/harbor.md: preparing a Harbor task once (pull and
// unpack its base image, replay its Dockerfile, provision its verifier),
// then what each attempt costs (a private copy of the environment and a
// verifier run). The image is a small one of the host's programs (about
// 4 MB); BenchmarkCopy in package image measures copies of larger trees.
// CPU time (-benchtime, /usr/bin/time) is meaningful on a shared machine;
// wall time is not.
//
//	go test ./harbor -run '^$' -bench 'Prepare|Attempt' -benchtime 5x
func BenchmarkPrepare(b *testing.B) {
	r := testRuntime(b)
	ref := pushRootfs(b, "bash", "mkdir", "wc", "tr", "cat", "rm")
	tk, err := Load(copyTask(b, "testdata/suite/sh-count", ref), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		dir := b.TempDir()
		r.Images = &image.Store{Dir: filepath.Join(dir, "images")}
		r.Dir = filepath.Join(dir, "envs")
		if _, err := r.Prepare(context.Background(), tk); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAttempt(b *testing.B) {
	r := testRuntime(b)
	ref := pushRootfs(b, "bash", "mkdir", "wc", "tr", "cat", "rm")
	tk, err := Load(copyTask(b, "testdata/suite/sh-count", ref), Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	p, err := r.Prepare(ctx, tk)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		a, err := r.NewAttempt(p, "")
		if err != nil {
			b.Fatal(err)
		}
		if v, _, err := a.Verify(ctx); err != nil || v.Passed {
			b.Fatalf("%+v %v", v, err)
		}
		a.Close()
	}
}
