package semver

import (
	"reflect"
	"testing"
)

func TestHiddenCompareNumeric(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"1.10.0", "1.9.0", 1},
		{"1.9.0", "1.10.0", -1},
		{"2.0.0", "10.0.0", -1},
		{"0.0.9", "0.0.10", -1},
		{"v1.20.3", "1.3.20", 1},
		{"3.4.5", "v3.4.5", 0},
		{"1.2.10", "1.2.9", 1},
	}
	for _, tt := range tests {
		got, err := Compare(tt.a, tt.b)
		if err != nil {
			t.Fatalf("Compare(%q, %q): %v", tt.a, tt.b, err)
		}
		if got != tt.want {
			t.Errorf("Compare(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestHiddenSort(t *testing.T) {
	vs := []string{"1.10.0", "1.2.0", "v0.9.0", "1.9.1", "10.0.0", "2.0.0"}
	if err := Sort(vs); err != nil {
		t.Fatal(err)
	}
	want := []string{"v0.9.0", "1.2.0", "1.9.1", "1.10.0", "2.0.0", "10.0.0"}
	if !reflect.DeepEqual(vs, want) {
		t.Errorf("Sort = %v, want %v", vs, want)
	}
}

func TestHiddenLatest(t *testing.T) {
	got, err := Latest([]string{"1.9.0", "v1.10.0", "1.2.0"})
	if err != nil {
		t.Fatal(err)
	}
	if got != "v1.10.0" {
		t.Errorf("Latest = %q, want %q", got, "v1.10.0")
	}
	if got, err := Latest(nil); err != nil || got != "" {
		t.Errorf("Latest(nil) = %q, %v; want \"\", nil", got, err)
	}
}

func TestHiddenErrorsKept(t *testing.T) {
	if _, err := Compare("1.2", "1.2.3"); err == nil {
		t.Error("Compare(\"1.2\", \"1.2.3\") succeeded, want an error")
	}
	if err := Sort([]string{"1.0.0", "one.two.three"}); err == nil {
		t.Error("Sort with a bad version succeeded, want an error")
	}
}
