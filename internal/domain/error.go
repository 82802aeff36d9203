// Package domain holds Taskgraph's entities, enums and pure rules: the lifecycle
// state machine, display ids, priority scores, validation and the Error type every
// layer returns. It imports the standard library only.
package domain

import (
	"errors"
	"fmt"
)

// Code classifies an Error; the server maps it to extensions.code.
type Code string

// Error codes of the API contract.
const (
	CodeUnauthenticated   Code = "UNAUTHENTICATED"
	CodeForbidden         Code = "FORBIDDEN"
	CodeNotFound          Code = "NOT_FOUND"
	CodeBadUserInput      Code = "BAD_USER_INPUT"
	CodeConflict          Code = "CONFLICT"
	CodeVersionConflict   Code = "VERSION_CONFLICT"
	CodeCycleDetected     Code = "CYCLE_DETECTED"
	CodeInvalidTransition Code = "INVALID_TRANSITION"
	CodeLeaseLost         Code = "LEASE_LOST"
	CodeLimitExceeded     Code = "LIMIT_EXCEEDED"
	CodeUnavailable       Code = "UNAVAILABLE"
	CodeInternal          Code = "INTERNAL"
)

// Error is the one error type that crosses layers. Message is safe to show a client;
// Field names the offending input field; Details become extra error extensions.
type Error struct {
	Code    Code
	Message string
	Field   string
	Details map[string]any
}

func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s: %s (field %s)", e.Code, e.Message, e.Field)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Errorf builds an Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// InputError is a BAD_USER_INPUT error naming the input field at fault.
func InputError(field, format string, args ...any) *Error {
	return &Error{Code: CodeBadUserInput, Message: fmt.Sprintf(format, args...), Field: field}
}

// NotFound reports that an entity does not exist or is not visible to the caller.
func NotFound(what string) *Error {
	return &Error{Code: CodeNotFound, Message: what + " not found"}
}

// Forbidden reports an authenticated caller that may not do this.
func Forbidden(format string, args ...any) *Error {
	return Errorf(CodeForbidden, format, args...)
}

// UnavailableMessage is what a client is told when the database cannot be
// reached.
const UnavailableMessage = "the database is unavailable (restarting or unreachable); retry in a moment"

// Unavailable reports that the database cannot be reached right now — it is
// restarting, failing over, or the network to it is down. The request did not
// complete; retrying it after a moment can succeed.
func Unavailable() *Error {
	return &Error{Code: CodeUnavailable, Message: UnavailableMessage}
}

// ErrorCode returns the code of err, or CodeInternal when err is not a domain Error.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// AsError returns the domain Error inside err, if any.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
