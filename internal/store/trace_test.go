package store

import "testing"

func TestExportedStoreFunc(t *testing.T) {
	for fn, want := range map[string]string{
		storePrefix + "TaskQueries.TasksByIDs":          "TaskQueries.TasksByIDs",
		storePrefix + "(*Q).Now":                        "Q.Now",
		storePrefix + "(*DB).PulseAgent.func1":          "DB.PulseAgent",
		storePrefix + "(*DB).InTx":                      "",
		storePrefix + "(*DB).InTx.func1":                "",
		storePrefix + "(*Q).selectP":                    "",
		storePrefix + "byIDs[...]":                      "",
		"github.com/taskgraph/taskgraph/internal/app.X": "",
	} {
		if got := exportedStoreFunc(fn); got != want {
			t.Errorf("exportedStoreFunc(%q) = %q, want %q", fn, got, want)
		}
	}
}

func TestOperationOf(t *testing.T) {
	for q, want := range map[string]string{"\n\t\tSELECT * FROM x": "SELECT", "WITH s AS (…)": "WITH", "update t": "UPDATE", "": ""} {
		if got := operationOf(q); got != want {
			t.Errorf("operationOf(%q) = %q, want %q", q, got, want)
		}
	}
}
