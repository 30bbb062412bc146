#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/time.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <stdint.h>
static volatile long n;
static volatile uint64_t *shared;
static uint64_t sink;
static void h(int s){ struct itimerval t={{0,0},{0,1000}}; (void)getpid(); setitimer(ITIMER_REAL,&t,0); n++; }
static double cpu(){struct timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID,&t); return t.tv_sec+t.tv_nsec*1e-9;}
static double wall(){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec+t.tv_nsec*1e-9;}
static double busy(){ FILE*f=fopen("/proc/stat","r"); unsigned long long u,n_,sy,id,io,irq,sirq,st; if(fscanf(f,"cpu %llu %llu %llu %llu %llu %llu %llu %llu",&u,&n_,&sy,&id,&io,&irq,&sirq,&st)!=8) exit(1); fclose(f); return (u+n_+sy+irq+sirq)/100.0; }
static long spin_check(long iters){ volatile uint64_t x=0; uint64_t last=*shared; long k=0;
  for(long i=0;i<iters;i++){ x+=i*7; uint64_t c=*shared; if (__builtin_expect(c!=last,0)){ last=c; k++; struct timespec ts; clock_gettime(CLOCK_MONOTONIC,&ts); sink+=ts.tv_nsec;} }
  return k; }
static pid_t ticker(void){ pid_t p=fork(); if(p==0){ struct timespec ts; clock_gettime(CLOCK_MONOTONIC,&ts);
      for(;;){ ts.tv_nsec+=1000000; if(ts.tv_nsec>=1000000000){ts.tv_nsec-=1000000000;ts.tv_sec++;}
        clock_nanosleep(CLOCK_MONOTONIC,TIMER_ABSTIME,&ts,0); __atomic_fetch_add(shared,1,__ATOMIC_RELAXED);} } usleep(20000); return p; }
int main(int argc,char**argv){
  long it=argc>1?atol(argv[1]):6000000000L; int rounds=argc>2?atoi(argv[2]):5;
  shared=mmap(0,4096,PROT_READ|PROT_WRITE,MAP_SHARED|MAP_ANONYMOUS,-1,0);
  signal(SIGALRM,h);
  printf("phase\tcpu_s\twall_s\tsys_busy_s\tevents\n");
  for(int r=0;r<rounds;r++) for(int ph=0;ph<3;ph++){
    pid_t p=0; long ev=0;
    if(ph==2) p=ticker();
    double c0=cpu(), w0=wall(), b0=busy();
    if(ph==1){ n=0; struct itimerval t={{0,0},{0,1000}}; setitimer(ITIMER_REAL,&t,0); }
    ev=spin_check(it);
    if(ph==1){ struct itimerval z={{0,0},{0,0}}; setitimer(ITIMER_REAL,&z,0); ev=n; }
    double c1=cpu(), w1=wall(), b1=busy();
    if(p){ kill(p,SIGKILL); waitpid(p,0,0); }
    printf("%s\t%.3f\t%.3f\t%.2f\t%ld\n", ph==0?"none":ph==1?"signal":"ticker", c1-c0, w1-w0, b1-b0, ev);
    fflush(stdout);
  }
}
