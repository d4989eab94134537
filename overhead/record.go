package overhead

import "github.com/benchhq/bench/results"

// Record is the report as the store keeps it (results.Store.SaveOverhead),
// under the report's Arm.
func (r *Report) Record() *results.Overhead {
	o := &results.Overhead{
		Arm:            r.Arm,
		Model:          r.Model,
		NumCtx:         r.NumCtx,
		MeasuredAt:     r.MeasuredAt,
		BaselineTokens: r.Baseline.PromptTokens,
		PromptTokens:   r.All.PromptTokens,
		Tokens:         r.Total(),
		SumOfTools:     r.SumOfTools(),
		Truncated:      r.All.Truncated,
	}
	for _, s := range r.Sets {
		o.Items = append(o.Items, results.OverheadItem{Kind: results.OverheadSet, Name: s.Name, Set: s.Name,
			PromptTokens: s.PromptTokens, Tokens: s.Tokens, Truncated: s.Truncated})
		for _, t := range s.Tools {
			o.Items = append(o.Items, results.OverheadItem{Kind: results.OverheadTool, Name: t.Name, Set: s.Name,
				PromptTokens: t.PromptTokens, Tokens: t.Tokens, Truncated: t.Truncated})
		}
	}
	return o
}

// FromRecord rebuilds a report from a stored overhead (results.Store.Overhead),
// for rendering. Requests is left 0: the store does not keep it.
func FromRecord(o *results.Overhead) *Report {
	r := &Report{
		Arm:        o.Arm,
		Model:      o.Model,
		NumCtx:     o.NumCtx,
		MeasuredAt: o.MeasuredAt,
		Baseline:   Count{PromptTokens: o.BaselineTokens, Truncated: o.NumCtx > 0 && o.BaselineTokens >= o.NumCtx},
		All:        Count{PromptTokens: o.PromptTokens, Truncated: o.Truncated},
	}
	index := map[string]int{}
	set := func(name string) *SetCost {
		i, ok := index[name]
		if !ok {
			i = len(r.Sets)
			index[name] = i
			r.Sets = append(r.Sets, SetCost{Name: name})
		}
		return &r.Sets[i]
	}
	for _, it := range o.Items {
		s := set(it.Set)
		switch it.Kind {
		case results.OverheadSet:
			s.Count = Count{PromptTokens: it.PromptTokens, Truncated: it.Truncated}
			s.Tokens = it.Tokens
		case results.OverheadTool:
			s.Tools = append(s.Tools, ToolCost{Name: it.Name, Count: Count{PromptTokens: it.PromptTokens, Truncated: it.Truncated}, Tokens: it.Tokens})
		}
	}
	return r
}
