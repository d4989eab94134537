package harbor

import (
	"sort"
	"strings"
)

// defaultPath is the PATH Docker gives a container whose image sets none.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// envList is an environment in order of first setting, as Docker keeps a
// container's.
type envList struct {
	keys []string
	vals map[string]string
}

func newEnv(kvs []string) *envList {
	e := &envList{vals: map[string]string{}}
	for _, kv := range kvs {
		k, v, _ := strings.Cut(kv, "=")
		e.set(k, v)
	}
	if _, ok := e.vals["PATH"]; !ok {
		e.set("PATH", defaultPath)
	}
	return e
}

func (e *envList) set(k, v string) {
	if _, ok := e.vals[k]; !ok {
		e.keys = append(e.keys, k)
	}
	e.vals[k] = v
}

// list is the environment as KEY=VALUE, with extra set over it (sorted
// by key for the extras, so the result is stable).
func (e *envList) list(extra map[string]string) []string {
	out := make([]string, 0, len(e.keys)+len(extra))
	for _, k := range e.keys {
		if _, over := extra[k]; !over {
			out = append(out, k+"="+e.vals[k])
		}
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, k+"="+extra[k])
	}
	return out
}
