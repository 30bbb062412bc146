#include <stdio.h>
#include <signal.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <stdint.h>
static volatile long n;
static void h(int s){ struct itimerval t={{0,0},{0,1000}}; (void)getpid(); setitimer(ITIMER_REAL,&t,0); n++; }
static void h0(int s){ n++; }
static double now(){struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID,&t); return t.tv_sec+t.tv_nsec*1e-9;}
static double spin(long iters){ volatile uint64_t x=0; double t0=now(); for(long i=0;i<iters;i++) x+=i*7; return now()-t0; }
int main(){
  long it=4000000000L;
  double base=spin(it), base2=spin(it);
  printf("base %.4f %.4f\n", base, base2);
  signal(SIGALRM,h); n=0;
  struct itimerval t={{0,0},{0,1000}}; setitimer(ITIMER_REAL,&t,0);
  double w=spin(it); struct itimerval z={{0,0},{0,0}}; setitimer(ITIMER_REAL,&z,0);
  printf("oneshot rearm: %ld sigs, %.4f s, %.1f us/sig\n", n, w, (w-(base<base2?base:base2))/n*1e6);
  signal(SIGALRM,h0); n=0;
  struct itimerval p={{0,1000},{0,1000}}; setitimer(ITIMER_REAL,&p,0);
  w=spin(it); setitimer(ITIMER_REAL,&z,0);
  printf("periodic: %ld sigs, %.4f s, %.1f us/sig\n", n, w, (w-(base<base2?base:base2))/n*1e6);
  base=spin(it); printf("base %.4f\n", base);
}
