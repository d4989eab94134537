package image

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkCopy measures an attempt's private copy of a root file system
// (image.Copy), the per-attempt cost of a Harbor task: by default of the
// host's /usr/lib/python3.11, or of BENCH_COPY_SRC. CPU time and bytes are
// meaningful on a shared machine; wall time is not.
//
//	go test ./image -run '^$' -bench Copy -benchtime 5x
func BenchmarkCopy(b *testing.B) {
	src := os.Getenv("BENCH_COPY_SRC")
	if src == "" {
		src = "/usr/lib/python3.11"
	}
	var files, bytes int64
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if fi, err := d.Info(); err == nil && fi.Mode().IsRegular() {
			files++
			bytes += fi.Size()
		}
		return nil
	})
	if err != nil {
		b.Skipf("no %s: %v", src, err)
	}
	b.SetBytes(bytes)
	b.ReportMetric(float64(files), "files")
	dir := b.TempDir()
	b.ResetTimer()
	for i := range b.N {
		dst := filepath.Join(dir, "view", string(rune('a'+i%26)), filepath.Base(os.TempDir())+string(rune('0'+i/26)))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := Copy(src, dst); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		os.RemoveAll(dst)
		b.StartTimer()
	}
}
