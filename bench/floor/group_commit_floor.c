// The floor of durable group commit, in C: the program `engram_bench::floor` (bench/src/floor.rs)
// runs in Rust beside every `durable` measurement, written with pthreads to check that the Rust
// one adds nothing. THREADS writers each append a 128-byte record and wait until an fdatasync
// covers it; one at a time leads the write (into preallocated space) and fdatasync of everything
// appended so far, then wakes the waiters. No other work.
//
//   gcc -O2 -Wall -pthread -o /tmp/gcf bench/floor/group_commit_floor.c && /tmp/gcf THREADS SECONDS DIR
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RECORD 128
#define LOG_BYTES (64L << 20)
#define MAX_THREADS 64

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t synced_cv = PTHREAD_COND_INITIALIZER;
static char buffer[1 << 20], out[1 << 20];
static long buffered, appended, synced, offset, syncs;
static int leading, fd;
static volatile int stop;
static double *lat[MAX_THREADS];
static long nlat[MAX_THREADS];

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void *writer(void *arg) {
  long me = (long)arg;
  char rec[RECORD];
  memset(rec, (int)(me | 1), sizeof rec);
  lat[me] = malloc(sizeof(double) * 4000000);
  while (!stop && nlat[me] < 4000000) {
    double started = now();
    pthread_mutex_lock(&mu);
    memcpy(buffer + buffered, rec, RECORD);
    buffered += RECORD;
    long mine = ++appended;
    while (synced < mine) {
      if (leading) {
        pthread_cond_wait(&synced_cv, &mu);
        continue;
      }
      leading = 1;
      long upto = appended, n = buffered, at = offset;
      memcpy(out, buffer, n);
      buffered = 0;
      offset = (offset + n) % (LOG_BYTES - (1 << 20));
      pthread_mutex_unlock(&mu);
      if (pwrite(fd, out, n, at) != n || fdatasync(fd) != 0) {
        perror("group_commit_floor");
        exit(1);
      }
      pthread_mutex_lock(&mu);
      leading = 0;
      syncs++;
      synced = upto;
      pthread_cond_broadcast(&synced_cv);
    }
    pthread_mutex_unlock(&mu);
    lat[me][nlat[me]++] = (now() - started) * 1e6;
  }
  return 0;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc != 4 || atoi(argv[1]) < 1 || atoi(argv[1]) > MAX_THREADS) {
    fprintf(stderr, "usage: %s THREADS(1-%d) SECONDS DIR\n", argv[0], MAX_THREADS);
    return 2;
  }
  int n = atoi(argv[1]);
  double secs = atof(argv[2]);
  char path[4096];
  snprintf(path, sizeof path, "%s/group_commit_floor.log", argv[3]);
  fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  char *zeros = calloc(1, LOG_BYTES);
  if (fd < 0 || pwrite(fd, zeros, LOG_BYTES, 0) != LOG_BYTES || fsync(fd) != 0) {
    perror(path);
    return 1;
  }
  pthread_t t[MAX_THREADS];
  double t0 = now();
  for (long i = 0; i < n; i++) pthread_create(&t[i], 0, writer, (void *)i);
  usleep((useconds_t)(secs * 1e6));
  stop = 1;
  long total = 0;
  for (int i = 0; i < n; i++) {
    pthread_join(t[i], 0);
    total += nlat[i];
  }
  double wall = now() - t0;
  double *all = malloc(sizeof(double) * (total + 1));
  long k = 0;
  for (int i = 0; i < n; i++)
    for (long j = 0; j < nlat[i]; j++) all[k++] = lat[i][j];
  qsort(all, total, sizeof(double), cmp);
  printf("{\"measure\":\"c_group_commit_floor\",\"threads\":%d,\"ops_per_s\":%.0f,\"commits_per_fsync\":%.2f,"
         "\"p50_us\":%.0f,\"p99_us\":%.0f,\"max_us\":%.0f}\n",
         n, total / wall, (double)total / (syncs ? syncs : 1), all[total / 2], all[total * 99 / 100], all[total ? total - 1 : 0]);
  unlink(path);
  return 0;
}
