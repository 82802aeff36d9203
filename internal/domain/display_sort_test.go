package domain_test

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
)

func TestDisplaySortKey(t *testing.T) {
	require.Equal(t, "TU-TG-TSK-0000000001", domain.DisplaySortKey("TU-TG-TSK-001"))
	require.Equal(t, "TU-TG-TSK-0000001000", domain.DisplaySortKey("TU-TG-TSK-1000"))
	require.Equal(t, "TU-TG-TSK-12345678901", domain.DisplaySortKey("TU-TG-TSK-12345678901"))
	ids := []string{"TU-TG-TSK-1000", "TU-TG-BUG-002", "TU-TG-TSK-999", "TU-TG-TSK-001", "TU-TG-BUG-1001"}
	sort.Slice(ids, func(i, j int) bool { return domain.DisplaySortKey(ids[i]) < domain.DisplaySortKey(ids[j]) })
	require.Equal(t, []string{"TU-TG-BUG-002", "TU-TG-BUG-1001", "TU-TG-TSK-001", "TU-TG-TSK-999", "TU-TG-TSK-1000"}, ids)
	for n := 1; n < 2000; n++ {
		a, b := domain.DisplayID("tg", domain.CategoryTask, n), domain.DisplayID("tg", domain.CategoryTask, n+1)
		require.Less(t, domain.DisplaySortKey(a), domain.DisplaySortKey(b))
	}
}
