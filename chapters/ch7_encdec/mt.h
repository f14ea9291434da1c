// mt.h - ./ch7's translation mode: German to English on Multi30k.
//
//   ./ch7 --task translate                 learn BPE, train, report BLEU
//   ./ch7 --checkpoint F --translate "Ein Hund läuft."
//   ./ch7 --checkpoint F --translate-file sentences.de
//
// main.c hands the command line over when --task is translate or a
// translation flag is given.
#ifndef CH7_MT_H
#define CH7_MT_H

int mt_main(int argc, char **argv);

#endif
