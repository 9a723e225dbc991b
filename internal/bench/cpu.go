package bench

import (
	"context"
	"database/sql"
	"os"
	"strconv"
	"strings"
	"time"
)

// CPU time is read from /proc, so the bench can say what each request cost
// the machine: the load generator, the service and the database. On a
// shared machine throughput swings with what else runs, while the CPU a
// request takes barely moves; the two together tell noise from change.

// clockTick is the unit of utime and stime in /proc/PID/stat (USER_HZ,
// 100 on Linux).
const clockTick = 10 * time.Millisecond

// cpuOf returns the CPU time (user + system, all threads) used so far by the
// processes pids; those gone or unreadable count zero.
func cpuOf(pids ...int) time.Duration {
	var total time.Duration
	for _, pid := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		// The command name, in parentheses, may hold spaces: count from after it.
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		k, _ := strconv.ParseInt(f[12], 10, 64)
		total += time.Duration(u+k) * clockTick
	}
	return total
}

// backends lists the PostgreSQL server processes serving connections named
// app (application_name), on the same machine as the bench.
func backends(ctx context.Context, db *sql.DB, app string) []int {
	rows, err := db.QueryContext(ctx, `SELECT pid FROM pg_stat_activity WHERE application_name = $1`, app)
	if err != nil {
		return nil
	}
	defer rows.Close()
	var out []int
	for rows.Next() {
		var pid int
		if rows.Scan(&pid) == nil {
			out = append(out, pid)
		}
	}
	return out
}
