package overhead

import "github.com/benchhq/bench/results"

// Record is the report as the store keeps it (results.Store.SaveOverhead),
// under the report's Arm.
func (r *Report) Record() *results.Overhead {
	o := &results.Overhead{
		Arm:            r.Arm,
		Model:          r.Model,
		NumCtx:         r.NumCtx,
		ModelContext:   r.ModelContext,
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
