package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"runtime/debug"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// Codes beyond domain's that the presenter passes on or produces.
const (
	// codeBadRequest: the HTTP request itself is malformed (undecodable JSON
	// body, bad persisted-query extension); there is no GraphQL to speak of.
	codeBadRequest = string(domain.CodeBadUserInput)
	// codeGQLComplexity is what gqlgen's complexity extension sets.
	codeGQLComplexity = "COMPLEXITY_LIMIT_EXCEEDED"
	// internalMessage is all a client learns about an unexpected error.
	internalMessage = "internal error"
)

// suggestionMarker starts the hint gqlparser appends to validation messages.
const suggestionMarker = " Did you mean "

// ruleValuesOfCorrectType is gqlparser's rule for literal argument values:
// wrong enum value, wrong scalar type, missing required input field.
const ruleValuesOfCorrectType = "ValuesOfCorrectType"

// clientProtocolErrors are messages gqlgen and its APQ extension produce,
// without a code, for a malformed request. The first one is followed by the
// request body, which must never be echoed: the message is cut to the prefix.
var clientProtocolErrors = []string{
	"json request body could not be decoded",
	"could not read request body",
	"invalid APQ extension data",
	"unsupported APQ version",
	"provided APQ hash does not match query",
}

// panicError is what recoverPanic hands to the presenter; the panic is already
// logged with its stack.
type panicError struct{ value any }

func (e *panicError) Error() string { return fmt.Sprintf("panic: %v", e.value) }

// recoverPanic is the executor's RecoverFunc: log with stack, present as INTERNAL.
func (s *server) recoverPanic(ctx context.Context, p any) error {
	LoggerFrom(ctx).ErrorContext(ctx, "panic in graphql resolver",
		slog.String("panic", fmt.Sprint(p)),
		slog.String("path", graphql.GetPath(ctx).String()),
		slog.String("operation", operationName(ctx)),
		slog.String("stack", string(debug.Stack())),
	)
	return &panicError{value: p}
}

// presentError is the executor's ErrorPresenter. Domain errors show their code,
// message, field and details; GraphQL parse and validation errors keep gqlgen's
// message and code, except input coercion (BAD_USER_INPUT) and limits
// (LIMIT_EXCEEDED); anything unexpected is logged and shown as INTERNAL.
func (s *server) presentError(ctx context.Context, err error) *gqlerror.Error {
	if err == nil {
		return nil
	}
	var gqlErr *gqlerror.Error // the outermost one, when err is or wraps one
	_ = errors.As(err, &gqlErr)
	out := &gqlerror.Error{Err: err}
	if gqlErr != nil {
		out.Path = gqlErr.Path
		out.Locations = gqlErr.Locations
	} else {
		out.Path = graphql.GetPath(ctx)
	}

	if derr, ok := domain.AsError(err); ok {
		if derr.Code == domain.CodeUnavailable {
			// The client is told to retry; the operator learns why.
			LoggerFrom(ctx).WarnContext(ctx, "database unavailable",
				slog.String("error", rootMessage(err)),
				slog.String("path", out.Path.String()),
				slog.String("operation", operationName(ctx)),
			)
		}
		field := derr.Field
		if field == "" && derr.Code == domain.CodeBadUserInput && gqlErr != nil {
			field, _ = argumentField(ctx, gqlErr.Path)
		}
		return withCode(out, derr.Message, string(derr.Code), field, derr.Details)
	}
	var perr *panicError
	if errors.As(err, &perr) {
		return withCode(out, internalMessage, string(domain.CodeInternal), "", nil)
	}

	if gqlErr != nil {
		code, _ := gqlErr.Extensions["code"].(string)
		switch code {
		case "":
			if field, ok := argumentField(ctx, gqlErr.Path); ok {
				// An argument the generated code could not unmarshal (enum case,
				// scalar format): the client's input, not our failure.
				return withCode(out, gqlErr.Message, string(domain.CodeBadUserInput), field, nil)
			}
			if isIntrospectionDisabled(ctx, gqlErr) {
				return withCode(out, "introspection is disabled on this server", string(domain.CodeForbidden), "", nil)
			}
			for _, prefix := range clientProtocolErrors {
				if strings.HasPrefix(gqlErr.Message, prefix) {
					return withCode(out, prefix, codeBadRequest, "", nil)
				}
			}
		case errcode.ParseFailed:
			if strings.HasPrefix(gqlErr.Message, "exceeded token limit") {
				return withCode(out, gqlErr.Message, string(domain.CodeLimitExceeded), "", nil)
			}
			return keep(out, gqlErr)
		case errcode.ValidationFailed:
			if !s.cfg.FieldSuggestions {
				// gqlgen's switch covers field names only; gqlparser also
				// suggests arguments, types and enum values.
				if i := strings.Index(gqlErr.Message, suggestionMarker); i > 0 {
					gqlErr = &gqlerror.Error{Message: gqlErr.Message[:i], Path: gqlErr.Path, Extensions: gqlErr.Extensions, Rule: gqlErr.Rule}
				}
			}
			if field, ok := variableField(gqlErr.Path); ok {
				return withCode(out, gqlErr.Message, string(domain.CodeBadUserInput), field, nil)
			}
			if gqlErr.Rule == ruleValuesOfCorrectType {
				return withCode(out, gqlErr.Message, string(domain.CodeBadUserInput), "", nil)
			}
			return keep(out, gqlErr)
		case codeGQLComplexity:
			return withCode(out, gqlErr.Message, string(domain.CodeLimitExceeded), "", nil)
		default:
			// A code someone set on purpose (our limits, APQ's
			// PERSISTED_QUERY_NOT_FOUND): the message was written for clients.
			return keep(out, gqlErr)
		}
	}

	if canceled(ctx, err) {
		// The client went away or ended the operation (a subscription's
		// complete, a closed connection, a shutdown): a resolver still running
		// sees its context end. Nobody reads the answer, and nothing failed.
		LoggerFrom(ctx).DebugContext(ctx, "graphql operation canceled",
			slog.String("error", rootMessage(err)),
			slog.String("path", out.Path.String()),
			slog.String("operation", operationName(ctx)),
		)
		return withCode(out, internalMessage, string(domain.CodeInternal), "", nil)
	}
	LoggerFrom(ctx).ErrorContext(ctx, "graphql internal error",
		slog.String("error", rootMessage(err)),
		slog.String("path", out.Path.String()),
		slog.String("operation", operationName(ctx)),
	)
	return withCode(out, internalMessage, string(domain.CodeInternal), "", nil)
}

func withCode(out *gqlerror.Error, message, code, field string, details map[string]any) *gqlerror.Error {
	out.Message = message
	out.Extensions = make(map[string]any, len(details)+2)
	maps.Copy(out.Extensions, details)
	out.Extensions["code"] = code
	if field != "" {
		out.Extensions["field"] = field
	}
	return out
}

func keep(out, gqlErr *gqlerror.Error) *gqlerror.Error {
	out.Message = gqlErr.Message
	out.Extensions = maps.Clone(gqlErr.Extensions)
	return out
}

// canceled reports whether err is the end of the operation's context rather
// than a failure: the context is done, or err is context.Canceled (drivers
// report a cancelled statement so).
func canceled(ctx context.Context, err error) bool {
	return errors.Is(err, context.Canceled) || ctx.Err() != nil
}

// rootMessage is err's text without gqlerror's "input: path" decoration.
func rootMessage(err error) string {
	var gqlErr *gqlerror.Error
	if errors.As(err, &gqlErr) && gqlErr.Err != nil {
		return gqlErr.Err.Error()
	}
	if gqlErr != nil {
		return gqlErr.Message
	}
	return err.Error()
}

// variableField recognises gqlparser's variable coercion errors, whose path is
// ["variable", name, ...], and returns the dotted input path ("input.priority").
func variableField(path ast.Path) (string, bool) {
	if len(path) < 2 || path[0] != ast.PathName("variable") {
		return "", false
	}
	return path[1:].String(), true
}

// argumentField recognises an argument unmarshalling error of generated code:
// it is reported in the context of the field whose arguments are read, with a
// path that continues past the field's own path into one of its argument
// names. It returns that rest ("filter.status[0]").
func argumentField(ctx context.Context, path ast.Path) (string, bool) {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || fc.Field.Field == nil || fc.Field.Definition == nil {
		return "", false
	}
	base := fc.Path()
	if len(path) <= len(base) {
		return "", false
	}
	for i := range base {
		if path[i] != base[i] {
			return "", false
		}
	}
	name, ok := path[len(base)].(ast.PathName)
	if !ok || fc.Field.Definition.Arguments.ForName(string(name)) == nil {
		return "", false
	}
	return path[len(base):].String(), true
}

// isIntrospectionDisabled recognises gqlgen's refusal to run __schema/__type
// when the Introspection extension is off.
func isIntrospectionDisabled(ctx context.Context, gqlErr *gqlerror.Error) bool {
	if gqlErr.Err == nil || gqlErr.Err.Error() != "introspection disabled" {
		return false
	}
	fc := graphql.GetFieldContext(ctx)
	return fc != nil && fc.Field.Field != nil && (fc.Field.Name == "__schema" || fc.Field.Name == "__type")
}

// errorBody is the GraphQL error response written outside gqlgen (413, 400).
type errorBody struct {
	Errors []errorItem `json:"errors"`
}

type errorItem struct {
	Message    string         `json:"message"`
	Extensions map[string]any `json:"extensions"`
}

// writeGraphQLError answers a request that never reached gqlgen.
func writeGraphQLError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	writeGraphQLErrorBody(w, status, code, message)
}

// writeGraphQLErrorBody is writeGraphQLError with the Content-Type already set.
func writeGraphQLErrorBody(w http.ResponseWriter, status int, code, message string) {
	b, err := json.Marshal(errorBody{Errors: []errorItem{{Message: message, Extensions: map[string]any{"code": code}}}})
	if err != nil {
		panic(err) // cannot happen: strings only
	}
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
