package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/benchhq/bench/endpoint"
	"github.com/benchhq/bench/runner"
)

// hostList is the repeatable --host flag: one model server per value,
// URL or URL=SLOTS.
type hostList []endpoint.Spec

func (l *hostList) String() string {
	parts := make([]string, len(*l))
	for i, s := range *l {
		parts[i] = s.String()
	}
	return strings.Join(parts, " ")
}

// Set parses one --host value.
func (l *hostList) Set(v string) error {
	s, err := endpoint.ParseHost(v)
	if err != nil {
		return err
	}
	*l = append(*l, s)
	return nil
}

// hostFlagHelp documents --host for bench run.
const hostFlagHelp = "model server, repeatable: URL or URL=SLOTS, SLOTS being the attempts it serves at once, " +
	"e.g. --host http://gpu1:11434=4 --host http://gpu2:11434=4 (default $OLLAMA_HOST or http://127.0.0.1:11434)"

// endpointPool makes the pool of a run's model servers: the --host flags,
// else the run file's [[endpoints]], else Ollama's default address. Its
// events are told on stderr.
func endpointPool(api string, flags hostList, rf *runner.RunFile, stderr io.Writer) (*endpoint.Pool, error) {
	kind, err := endpoint.ParseAPI(api)
	if err != nil {
		return nil, usagef("run: --api: %v", err)
	}
	specs := []endpoint.Spec(flags)
	from := "--host"
	if len(specs) == 0 && len(rf.Endpoints) > 0 {
		specs, from = rf.Endpoints, rf.Path+": endpoints"
	}
	if len(specs) == 0 {
		specs = []endpoint.Spec{{}}
	}
	var eps []*endpoint.Endpoint
	for _, s := range specs {
		e, err := endpoint.New(kind, s, nil)
		if err != nil {
			return nil, usagef("run: %s: %v", from, err)
		}
		eps = append(eps, e)
	}
	pool, err := endpoint.NewPool(eps...)
	if err != nil {
		return nil, usagef("run: %s: %v", from, err)
	}
	pool.Log = func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) }
	return pool, nil
}

// planAPI is the plan's form of an API: "" for Ollama's.
func planAPI(api string) string {
	if api == string(endpoint.OpenAI) {
		return api
	}
	return ""
}
