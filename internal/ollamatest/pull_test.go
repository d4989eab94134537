package ollamatest_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/benchhq/bench/internal/ollamatest"
)

// The stand-in's pull API, through the official client: the stages of a
// real pull in order, each layer's completed bytes rising to its total,
// the model pulled afterwards; an unknown name and a failure midway as a
// real server streams them; an invalid name refused with HTTP 400.
func TestPullAPI(t *testing.T) {
	srv := ollamatest.New(ollamatest.Turns(), ollamatest.WithPullable(
		ollamatest.Pullable{Name: "tiny:1b", Layers: []int64{1000, 10}, Digest: "d1"},
		ollamatest.Pullable{Name: "broken:1b", Layers: []int64{1000}, FailAfter: 500, Error: "disk full"},
	))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	c := api.NewClient(u, http.DefaultClient)
	ctx := context.Background()

	if _, err := c.Show(ctx, &api.ShowRequest{Model: "tiny:1b"}); err == nil {
		t.Fatal("the model is there before the pull")
	}
	var stages []string
	completed := map[string]int64{}
	err := c.Pull(ctx, &api.PullRequest{Model: "tiny:1b"}, func(r api.ProgressResponse) error {
		if r.Digest != "" {
			if r.Completed < completed[r.Digest] || r.Completed > r.Total {
				t.Errorf("layer %s: completed %d after %d, total %d", r.Digest, r.Completed, completed[r.Digest], r.Total)
			}
			completed[r.Digest] = r.Completed
			if !strings.HasPrefix(r.Digest, "sha256:") || r.Status != "pulling "+r.Digest[7:19] {
				t.Errorf("layer status %q digest %q", r.Status, r.Digest)
			}
		}
		if len(stages) == 0 || stages[len(stages)-1] != r.Status {
			stages = append(stages, r.Status)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(stages, "|"); !strings.HasPrefix(got, "pulling manifest|pulling ") || !strings.HasSuffix(got, "|verifying sha256 digest|writing manifest|success") || len(stages) != 6 {
		t.Errorf("stages %s", got)
	}
	if len(completed) != 2 {
		t.Errorf("%d layers, want 2", len(completed))
	}
	list, err := c.List(ctx)
	if err != nil || len(list.Models) != 1 || list.Models[0].Name != "tiny:1b" || list.Models[0].Digest != "d1" {
		t.Errorf("after the pull, tags: %+v %v", list, err)
	}

	err = c.Pull(ctx, &api.PullRequest{Model: "absent:1b"}, func(api.ProgressResponse) error { return nil })
	if err == nil || err.Error() != ollamatest.ManifestMissing {
		t.Errorf("unknown model: %v", err)
	}
	err = c.Pull(ctx, &api.PullRequest{Model: "broken:1b"}, func(api.ProgressResponse) error { return nil })
	if err == nil || err.Error() != "disk full" {
		t.Errorf("failure midway: %v", err)
	}
	if _, err := c.Show(ctx, &api.ShowRequest{Model: "broken:1b"}); err == nil {
		t.Error("a pull that failed left the model there")
	}
	err = c.Pull(ctx, &api.PullRequest{Model: "Bad Name"}, func(api.ProgressResponse) error { return nil })
	var se api.StatusError
	if !errors.As(err, &se) || se.StatusCode != 400 || se.ErrorMessage != "invalid model name" {
		t.Errorf("invalid name: %v", err)
	}
	if srv.Pulls("tiny:1b") != 1 || srv.Pulls("absent:1b") != 1 || srv.Pulls("Bad Name") != 0 {
		t.Errorf("pull counts %d %d %d", srv.Pulls("tiny:1b"), srv.Pulls("absent:1b"), srv.Pulls("Bad Name"))
	}
}
