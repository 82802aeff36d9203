package db_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDisplaySortBackfill: migration 0006 gives the tasks already stored the
// sort key the store writes for new ones (domain.DisplaySortKey), on both
// dialects.
func TestDisplaySortBackfill(t *testing.T) {
	for _, d := range []dialect{sqliteDialect, postgresDialect} {
		t.Run(d.name, func(t *testing.T) {
			conn := d.open(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			p := newProvider(t, d, conn)
			_, err := p.UpTo(ctx, 5)
			require.NoError(t, err)

			const (
				userID    = "0195f0a8-0000-7000-8000-000000000001"
				projectID = "0195f0a8-0000-7000-8000-000000000002"
			)
			now := time.Now().UTC()
			_, err = conn.Exec(`INSERT INTO users (id, slug, name, email, created_at, updated_at)
				VALUES ($1, 'ada', 'Ada', 'ada@example.com', $2, $2)`, userID, now)
			require.NoError(t, err)
			_, err = conn.Exec(`INSERT INTO projects (id, slug, name, owner_id, created_at, updated_at)
				VALUES ($1, 'tg1', 'Taskgraph', $2, $3, $3)`, projectID, userID, now)
			require.NoError(t, err)
			want := map[string]string{
				"TU-TG1-TSK-999":   "TU-TG1-TSK-0000000999",
				"TU-TG1-TSK-1000":  "TU-TG1-TSK-0000001000",
				"TU-TG1-FEA-007":   "TU-TG1-FEA-0000000007",
				"TU-TG1-BUG-12345": "TU-TG1-BUG-0000012345",
			}
			i := 0
			for id := range want {
				i++
				_, err = conn.Exec(`INSERT INTO tasks (id, display_id, user_id, project_id, title, category, status,
					risk_level, priority, created_at, updated_at)
					VALUES ($1, $2, $3, $4, 'x', 'TASK', 'DRAFT', 'MEDIUM', 'P3', $5, $5)`,
					"0195f0a8-0000-7000-8000-00000000010"+string(rune('0'+i)), id, userID, projectID, now)
				require.NoError(t, err)
			}
			_, err = p.Up(ctx)
			require.NoError(t, err)
			rows, err := conn.Query(`SELECT display_id, display_sort FROM tasks`)
			require.NoError(t, err)
			defer rows.Close()
			got := map[string]string{}
			for rows.Next() {
				var id, sort string
				require.NoError(t, rows.Scan(&id, &sort))
				got[id] = sort
			}
			require.NoError(t, rows.Err())
			require.Equal(t, want, got)
		})
	}
}
