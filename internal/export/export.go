// Package export serves training data over plain HTTP: GET
// /export/examples.jsonl?suite=<suite id>&model=<model id> streams the
// conversations of every COMPLETED example (of that suite and model, when
// given) as JSON Lines. The server mounts it behind its authentication
// (internal/server Config.Export); the service authorises the caller like any
// API read. Errors before the first byte are JSON {"errors": [...]} with the
// API's codes; an error after it aborts the response, so that a client never
// takes a truncated file for a whole one.
package export

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/taskgraph/taskgraph/internal/catalog"
	"github.com/taskgraph/taskgraph/internal/domain"
)

// ContentType of the export: JSON Lines.
const ContentType = "application/jsonl"

// Handler returns the handler of GET /export/examples.jsonl. log gives the
// request's logger.
func Handler(cat *catalog.Service, log func(ctx context.Context) *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		q := r.URL.Query()
		x, err := cat.ExportExamples(ctx, q.Get("suite"), q.Get("model"))
		if err != nil {
			writeError(ctx, w, log(ctx), err)
			return
		}
		w.Header().Set("Content-Type", ContentType)
		w.Header().Set("Content-Disposition", `attachment; filename="examples.jsonl"`)
		w.Header().Set("Cache-Control", "no-store")
		if _, err := x.WriteTo(ctx, w); err != nil {
			if ctx.Err() == nil {
				log(ctx).ErrorContext(ctx, "export of examples failed", "err", err)
			}
			panic(http.ErrAbortHandler) // the client sees a broken response, not a short file
		}
	})
}

var statusOf = map[domain.Code]int{
	domain.CodeUnauthenticated: http.StatusUnauthorized,
	domain.CodeForbidden:       http.StatusForbidden,
	domain.CodeNotFound:        http.StatusNotFound,
	domain.CodeBadUserInput:    http.StatusBadRequest,
	domain.CodeLimitExceeded:   http.StatusRequestEntityTooLarge,
	domain.CodeUnavailable:     http.StatusServiceUnavailable,
}

func writeError(ctx context.Context, w http.ResponseWriter, log *slog.Logger, err error) {
	code, msg, field := domain.CodeInternal, "internal error", ""
	if e, ok := domain.AsError(err); ok {
		code, msg, field = e.Code, e.Message, e.Field
	} else {
		log.ErrorContext(ctx, "export of examples failed", "err", err)
	}
	status, ok := statusOf[code]
	if !ok {
		status = http.StatusInternalServerError
		if code != domain.CodeInternal {
			status = http.StatusConflict
		}
	}
	ext := map[string]any{"code": string(code)}
	if field != "" {
		ext["field"] = field
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]any{{"message": msg, "extensions": ext}}})
}
