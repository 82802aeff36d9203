package server

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/prometheus/client_golang/prometheus"
)

const metricsNamespace = "taskgraph"

// Bounded label values: client-chosen names and codes never grow the label set.
const (
	labelAnonymous   = "anonymous"
	labelOther       = "other"
	maxLabelValueLen = 64
)

type metrics struct {
	operations *operationLabels

	graphqlRequests *prometheus.CounterVec   // operation, status
	graphqlDuration *prometheus.HistogramVec // operation
	graphqlErrors   *prometheus.CounterVec   // code
	httpRequests    *prometheus.CounterVec   // path, code

	websocketConnections prometheus.Gauge
	subscriptions        prometheus.Gauge       // operations running on websockets
	websocketRefusals    *prometheus.CounterVec // reason
	sharedExecutions     prometheus.Gauge       // shared subscription executions running (multiplex.go)
	sharedMembers        *prometheus.CounterVec // writes: connection, gqlgen (wsdirect.go)

	loaderBatches   *prometheus.CounterVec // closed: quiescent, timer
	loaderAbandoned prometheus.Counter
	loaderWaits     prometheus.Counter
}

// newMetrics registers the server's collectors on reg. A second server on the
// same registry shares the collectors already there.
func newMetrics(reg prometheus.Registerer, dbStats func() sql.DBStats) *metrics {
	m := &metrics{
		operations: &operationLabels{max: DefaultMaxOperationLabels, seen: map[string]struct{}{}},
		graphqlRequests: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metricsNamespace,
			Name:      "graphql_requests_total",
			Help:      "GraphQL operations by operation name and outcome (ok: no errors).",
		}, []string{"operation", "status"})),
		graphqlDuration: register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: metricsNamespace,
			Name:      "graphql_request_duration_seconds",
			Help:      "Time from receiving a GraphQL operation to its (first) response.",
			Buckets:   prometheus.DefBuckets,
		}, []string{"operation"})),
		graphqlErrors: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metricsNamespace,
			Name:      "graphql_errors_total",
			Help:      "GraphQL errors sent to clients, by extensions.code.",
		}, []string{"code"})),
		httpRequests: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metricsNamespace,
			Name:      "http_requests_total",
			Help:      "HTTP requests by route and status code.",
		}, []string{"path", "code"})),
		websocketConnections: register(reg, prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: metricsNamespace,
			Name:      "websocket_connections",
			Help:      "Open GraphQL websocket connections.",
		})),
		subscriptions: register(reg, prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: metricsNamespace,
			Name:      "websocket_operations",
			Help:      "Operations (mostly subscriptions) running on GraphQL websocket connections.",
		})),
		websocketRefusals: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metricsNamespace,
			Name:      "websocket_refusals_total",
			Help:      "Websocket connections and operations refused by a cap, by reason: connections_per_user (connection_init closed 4429), operations_per_user (the operation answered LIMIT_EXCEEDED), operations_per_connection (closed 4429).",
		}, []string{"reason"})),
		sharedExecutions: register(reg, prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: metricsNamespace,
			Name:      "shared_subscription_executions",
			Help:      "Subscription executions shared by every subscriber of the same selection, variables and visibility: each resolves an event once for all of them.",
		})),
		sharedMembers: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metricsNamespace,
			Name:      "shared_subscription_members_total",
			Help:      "Subscribers that joined a shared execution, by how their events are written: connection (framed once and appended to the websocket by the execution) or gqlgen (through gqlgen's transport: the operation's id was not known, a slower path).",
		}, []string{"writes"})),
		loaderBatches: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metricsNamespace,
			Name:      "loader_batches_total",
			Help:      "Batched reads of queries and mutations by how they closed: quiescent (the level's last key was in) or timer (a safety net: promised work never came).",
		}, []string{"closed"})),
		loaderAbandoned: register(reg, prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: metricsNamespace,
			Name:      "loader_abandoned_total",
			Help:      "Operations whose work could not be counted, so that their batched reads fell back to the idle window.",
		})),
		loaderWaits: register(reg, prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: metricsNamespace,
			Name:      "loader_waits_total",
			Help:      "Times a resolver of a query or mutation waited on a loader's read (a batch, or a level read in flight); below a nested list read a level at a time, none waits.",
		})),
	}
	if dbStats != nil {
		register(reg, newDBStatsCollector(dbStats))
	}
	return m
}

func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
		panic("server: registering metrics: " + err.Error())
	}
	return c
}

// countBatches adds one operation's batched reads.
func (m *metrics) countBatches(quiescent, timed, waits int64, abandoned bool) {
	if waits > 0 {
		m.loaderWaits.Add(float64(waits))
	}
	if quiescent > 0 {
		m.loaderBatches.WithLabelValues("quiescent").Add(float64(quiescent))
	}
	if timed > 0 {
		m.loaderBatches.WithLabelValues("timer").Add(float64(timed))
	}
	if abandoned {
		m.loaderAbandoned.Inc()
	}
}

func (m *metrics) countError(code string) {
	m.graphqlErrors.WithLabelValues(boundedLabel(code, labelOther)).Inc()
}

// boundedLabel returns v when it is a short identifier ([A-Za-z0-9_]), else
// fallback.
func boundedLabel(v, fallback string) string {
	if v == "" || len(v) > maxLabelValueLen {
		return fallback
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return fallback
		}
	}
	return v
}

// operationName is the label and log value for the operation in ctx:
// its name, "anonymous", or "other" for names unfit for a label.
func operationName(ctx context.Context) string {
	if !graphql.HasOperationContext(ctx) {
		return labelAnonymous
	}
	opCtx := graphql.GetOperationContext(ctx)
	name := opCtx.OperationName
	if opCtx.Operation != nil && opCtx.Operation.Name != "" {
		name = opCtx.Operation.Name
	}
	if name == "" {
		return labelAnonymous
	}
	return boundedLabel(name, labelOther)
}

// DefaultMaxOperationLabels is how many distinct operation names get a label
// of their own in the GraphQL metrics; later names are counted as "other".
const DefaultMaxOperationLabels = 100

// operationLabels bounds the operation label: callers choose operation names,
// and every distinct label value is a time series kept for the process's
// lifetime. Names are taken only from operations of documents that passed
// validation (so only from authenticated callers, and never from a bare
// operationName parameter), and only the first max distinct ones.
type operationLabels struct {
	mu   sync.Mutex
	max  int
	seen map[string]struct{}
}

// label is the metrics label of the operation in ctx.
func (l *operationLabels) label(ctx context.Context) string {
	if !graphql.HasOperationContext(ctx) {
		return labelAnonymous
	}
	opCtx := graphql.GetOperationContext(ctx)
	if opCtx.Operation == nil {
		// Never became an operation (refused, unparsable, invalid): a name
		// the client sent is not trusted.
		if opCtx.OperationName == "" {
			return labelAnonymous
		}
		return labelOther
	}
	name := opCtx.Operation.Name
	if name == "" {
		return labelAnonymous
	}
	if name = boundedLabel(name, labelOther); name == labelOther || name == labelAnonymous {
		return name
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.seen[name]; ok {
		return name
	}
	if len(l.seen) >= l.max {
		return labelOther
	}
	l.seen[name] = struct{}{}
	return name
}

// observeGraphQL counts GraphQL operations, their duration and their errors,
// and tells the access log the operation name. As the outermost operation
// interceptor it sees the responses of every operation, including those
// short-circuited by inner interceptors; as a response interceptor it sees the
// responses gqlgen builds for requests that never became an operation (parse,
// validation and limit errors). A context mark keeps the two from counting the
// same response twice.
type observeGraphQL struct {
	m *metrics
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationInterceptor
	graphql.ResponseInterceptor
} = observeGraphQL{}

type observedKey struct{}

func (observeGraphQL) ExtensionName() string                   { return "Observe" }
func (observeGraphQL) Validate(graphql.ExecutableSchema) error { return nil }

func (o observeGraphQL) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	ctx = context.WithValue(ctx, observedKey{}, true)
	h := next(ctx)
	first := true
	return func(ctx context.Context) *graphql.Response {
		ctx = context.WithValue(ctx, observedKey{}, true)
		resp := h(ctx)
		o.record(ctx, resp, first)
		if resp != nil {
			first = false
		}
		return resp
	}
}

func (o observeGraphQL) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	if ctx.Value(observedKey{}) == nil {
		o.record(ctx, resp, true)
	}
	return resp
}

// record counts resp's errors, and on an operation's first response the
// operation itself (a subscription's later events are not new operations).
func (o observeGraphQL) record(ctx context.Context, resp *graphql.Response, first bool) {
	if resp == nil || ctx.Value(sharedKey{}) != nil {
		return // a shared execution's responses are counted per member (multiplex.go)
	}
	for _, e := range resp.Errors {
		code, _ := e.Extensions["code"].(string)
		o.m.countError(code)
	}
	if !first {
		return
	}
	label := o.m.operations.label(ctx)
	status := "ok"
	if len(resp.Errors) > 0 {
		status = "error"
	}
	o.m.graphqlRequests.WithLabelValues(label, status).Inc()
	if graphql.HasOperationContext(ctx) {
		if start := graphql.GetOperationContext(ctx).Stats.OperationStart; !start.IsZero() {
			o.m.graphqlDuration.WithLabelValues(label).Observe(time.Since(start).Seconds())
		}
	}
	if info := requestInfoFrom(ctx); info != nil {
		info.setOperation(operationName(ctx))
	}
}

// dbStatsCollector exports database/sql pool statistics read at scrape time.
type dbStatsCollector struct {
	stats        func() sql.DBStats
	maxOpen      *prometheus.Desc
	open         *prometheus.Desc
	inUse        *prometheus.Desc
	idle         *prometheus.Desc
	waitCount    *prometheus.Desc
	waitDuration *prometheus.Desc
}

func newDBStatsCollector(stats func() sql.DBStats) *dbStatsCollector {
	desc := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(metricsNamespace, "db", name), help, nil, nil)
	}
	return &dbStatsCollector{
		stats:        stats,
		maxOpen:      desc("max_open_connections", "Maximum number of open connections to the database (0: unlimited)."),
		open:         desc("open_connections", "Established connections, in use and idle."),
		inUse:        desc("in_use_connections", "Connections currently in use."),
		idle:         desc("idle_connections", "Idle connections."),
		waitCount:    desc("wait_count_total", "Connections waited for."),
		waitDuration: desc("wait_duration_seconds_total", "Time blocked waiting for a new connection."),
	}
}

func (c *dbStatsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.maxOpen, c.open, c.inUse, c.idle, c.waitCount, c.waitDuration} {
		ch <- d
	}
}

func (c *dbStatsCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	ch <- prometheus.MustNewConstMetric(c.maxOpen, prometheus.GaugeValue, float64(s.MaxOpenConnections))
	ch <- prometheus.MustNewConstMetric(c.open, prometheus.GaugeValue, float64(s.OpenConnections))
	ch <- prometheus.MustNewConstMetric(c.inUse, prometheus.GaugeValue, float64(s.InUse))
	ch <- prometheus.MustNewConstMetric(c.idle, prometheus.GaugeValue, float64(s.Idle))
	ch <- prometheus.MustNewConstMetric(c.waitCount, prometheus.CounterValue, float64(s.WaitCount))
	ch <- prometheus.MustNewConstMetric(c.waitDuration, prometheus.CounterValue, s.WaitDuration.Seconds())
}
