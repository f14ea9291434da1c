# Transformer from scratch in C: every entry point. `make help` lists them.

# ---- knobs (make VAR=value) ------------------------------------------------
CC ?= cc
EXERCISES ?= solutions   # folder graded by `make check`
PORTABLE ?= 0            # 1: no -march=native (-mcpu=native on arm64)
NO_BLAS ?= 0             # 1: naive triple-loop GEMM instead of OpenBLAS
NO_AVX512 ?= 0           # 1: build as for a CPU without AVX-512 (see help)
SAN ?= 0                 # 1: AddressSanitizer + UBSan build; fuzz: libFuzzer's
NO_INSTALL ?= 0          # 1: never apt-get; stop and say what is missing
MPI ?= 0                 # 1: ./ch6 trains across processes (mpirun -np N ./ch6)
OPT ?= -O3
V ?= 0                   # 1: show every compiler command
export NO_INSTALL NO_BLAS CC

# Strip the comments' trailing spaces from the knobs above.
EXERCISES := $(strip $(EXERCISES))
override PORTABLE := $(strip $(PORTABLE))
override NO_BLAS := $(strip $(NO_BLAS))
override NO_AVX512 := $(strip $(NO_AVX512))
override SAN := $(strip $(SAN))
override NO_INSTALL := $(strip $(NO_INSTALL))
override MPI := $(strip $(MPI))
override V := $(strip $(V))
Q := $(if $(filter 1,$(V)),,@)
say = $(if $(filter 1,$(V)),,@echo "  $(1)";)

comma := ,

# Every command make runs gets one locale, the C one with UTF-8. The
# tests read the numbers that programs print with awk, printf and sort,
# which read and write numbers by the locale: under a German one awk
# reads "0.5" as 0 and prints 0.5 as "0,5", and gcc's messages (whose
# first "error" the grader shows) may be translated. The programs never
# set a locale: they print "0.5" under any.
export LC_ALL := C.UTF-8
unexport LANGUAGE

# ---- what exists ------------------------------------------------------------
CHAPTER_DIRS := $(sort $(wildcard chapters/ch[1-9]_*))
# chapters/ch1_data -> 1
chnum = $(firstword $(subst _, ,$(patsubst chapters/ch%,%,$(1))))
CHAPTERS := $(foreach d,$(CHAPTER_DIRS),$(call chnum,$(d)))
chdir = $(filter chapters/ch$(1)_%,$(CHAPTER_DIRS))
PROGRAMS := $(addprefix ch,$(CHAPTERS))
# chapters whose programs read Tiny Shakespeare by default (./ch9 to
# fine-tune GPT-2 on)
DATA_CHAPTERS := 1 5 6 9
# Multi30k (chapter 7): train.de is unpacked last, so it stands for all six
MULTI30K := data/multi30k/train.de

# ---- build variant: objects for different flags never mix --------------------
VARIANT := $(notdir $(firstword $(CC)))$(if $(filter 1,$(SAN)),-san)$(if $(filter thread,$(SAN)),-tsan)$(if $(filter fuzz,$(SAN)),-fuzz)$(if $(filter 1,$(NO_BLAS)),-noblas)$(if $(filter 1,$(PORTABLE)),-portable)$(if $(filter 1,$(NO_AVX512)),-noavx512)
BUILD := build
OBJ := $(BUILD)/$(VARIANT)

# Detections run once, on first use (after `deps` may have installed things).
lazy = $(eval $(1) := $(shell $(2)))$($(1))

# ---- the architecture built for ---------------------------------------------
# What the compiler builds for: x86_64, aarch64 (its -dumpmachine's first
# field). The flag that tunes for this machine's CPU is -march=native on
# x86-64 and -mcpu=native on arm64 (gcc's spelling there), where it is
# tried first: a cross compiler, which cannot know the CPU that will run
# its programs, refuses it, and then there is none. -mno-avx512f
# (NO_AVX512=1) and the OpenBLAS core type Haswell are x86 things, used
# and named only there.
CC_ARCH = $(call lazy,CC_ARCH,$(CC) -dumpmachine 2>/dev/null | cut -d- -f1 | grep . || uname -m)
IS_ARM64 = $(filter aarch64 arm64,$(CC_ARCH))
IS_X86 = $(if $(filter x86_64 i386 i486 i586 i686,$(CC_ARCH)),1)
ARM64_NATIVE = $(call lazy,ARM64_NATIVE,echo 'int x;' | $(CC) -mcpu=native -x c -c - -o /dev/null 2>/dev/null && echo -mcpu=native)
# gcc 12 for arm64 (Debian 12's, native and cross alike) stops with an
# internal compiler error (in vect_transform_reduction) on a loop that
# takes the fmax or fmin of a double and a float widened to it, such as
# `err = fmax(err, fabs(a[i] - b[i]))`, the way the tests and a few
# programs measure a largest difference: NEON's max instruction makes it
# vectorise such a reduction, and the widening trips it. Those calls then
# go to the C library's fmax and fmin, which return the same numbers; no
# hot loop takes them (softmax's max is fmaxf, on floats, unaffected).
# Every gcc for arm64 gets it: harmless, and newer ones were not tried.
ARM64_GCC_FIX = $(if $(and $(IS_ARM64),$(filter-out clang%,$(CC_NAME))),-fno-builtin-fmax -fno-builtin-fmin)
ARCH_FLAGS = $(if $(filter 1,$(PORTABLE)),,$(if $(IS_ARM64),$(ARM64_NATIVE),-march=native)) \
    $(if $(and $(filter 1,$(NO_AVX512)),$(IS_X86)),-mno-avx512f) $(ARM64_GCC_FIX)
# A cross compiler named by its target (Debian's aarch64-linux-gnu-gcc on
# an x86-64 machine: make check-arm64): its archiver and C++ compiler are
# those of the same name, and pkg-config looks in the target's folder
# (/usr/lib/aarch64-linux-gnu/pkgconfig), where Debian's multiarch puts the
# arm64 builds of OpenBLAS and Check.
CC_NAME := $(notdir $(firstword $(CC)))
CROSS := $(filter-out $(shell uname -m)-%,$(filter %-linux-gnu,$(firstword $(subst -gcc, ,$(filter %-linux-gnu-gcc %-linux-gnu-gcc-%,$(CC_NAME))))))
PKG_CONFIG := $(if $(CROSS),$(if $(PKG_CONFIG_LIBDIR),,PKG_CONFIG_LIBDIR=/usr/lib/$(CROSS)/pkgconfig:/usr/share/pkgconfig ))pkg-config
ifneq ($(CROSS),)
ifeq ($(origin AR),default)
AR := $(CROSS)-ar
endif
endif
HAVE_OPENMP = $(call lazy,HAVE_OPENMP,$(if $(filter thread,$(SAN)),false,echo 'int main(void){return 0;}' | $(CC) -fopenmp -x c - -o /dev/null 2>/dev/null) && echo 1)
HAVE_NVCC = $(call lazy,HAVE_NVCC,command -v nvcc >/dev/null 2>&1 && echo 1)
# A GPU to run ./ch8 on: nvidia-smi lists one, or the driver made its device
HAVE_GPU = $(call lazy,HAVE_GPU,{ timeout 10 nvidia-smi -L >/dev/null 2>&1 || [ -e /dev/nvidia0 ]; } && echo 1)
# OpenBLAS comes in a pthreads build and an OpenMP build. Ours is the
# OpenMP one when the compiler's OpenMP is gcc's: then the GEMMs and our
# own parallel loops run on one pool of threads. With two pools on two
# cores, threads of one spin while the other works and a training step
# can take several times as long. (clang's OpenMP runtime is another
# library, so clang builds keep the pthreads OpenBLAS.)
# (the folder of the compiler's own architecture, /usr/lib/x86_64-linux-gnu/:
# with Debian's multiarch, other architectures' builds may be beside it)
BLAS_OMP_DIR = $(call lazy,BLAS_OMP_DIR,$(if $(filter clang%,$(notdir $(firstword $(CC)))),,$(if $(HAVE_OPENMP),m=$$($(CC) -print-multiarch 2>/dev/null); ls -d /usr/lib/$${m:-*}/openblas-openmp 2>/dev/null | head -n 1)))
BLAS_PKG = $(if $(BLAS_OMP_DIR),PKG_CONFIG_PATH=$(BLAS_OMP_DIR)/pkgconfig) $(PKG_CONFIG)
BLAS_CFLAGS = $(call lazy,BLAS_CFLAGS,$(BLAS_PKG) --cflags openblas 2>/dev/null)
BLAS_LIBS = $(call lazy,BLAS_LIBS,$(BLAS_PKG) --libs openblas 2>/dev/null$(if $(BLAS_OMP_DIR), && echo -Wl$(comma)-rpath$(comma)$(BLAS_OMP_DIR)))
CHECK_CFLAGS = $(call lazy,CHECK_CFLAGS,$(PKG_CONFIG) --cflags check 2>/dev/null)
CHECK_LIBS = $(call lazy,CHECK_LIBS,$(PKG_CONFIG) --libs check 2>/dev/null)

SANFLAGS := $(if $(filter thread,$(SAN)),-fsanitize=thread -g,-fsanitize=address,undefined -fno-sanitize-recover=undefined \
    -fno-omit-frame-pointer -g)
# SAN=fuzz: libFuzzer's coverage hooks in every object (the harnesses of
# tests/fuzz/ add its main when they link), with ASan and UBSan; -O1, as
# libFuzzer recommends, comes after OPT and so wins.
ifeq ($(SAN),fuzz)
SANFLAGS := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined \
    -fno-omit-frame-pointer -g -O1
ifeq ($(filter clang%,$(notdir $(firstword $(CC)))),)
$(error SAN=fuzz needs clang (libFuzzer): run make fuzz, or add CC=clang)
endif
endif
WARN := -Wall -Wextra -Werror -Wshadow -Wvla
# -fno-trapping-math: we never read the floating-point exception flags, and
# without it gcc will not turn a select (x < 0 ? a : b) into vector code
# on a CPU without AVX-512's masked instructions, so GELU and the softmax
# would run one number at a time on an AVX2 machine. Results do not change:
# no sum is reordered, and -ffp-contract=off keeps a * b + c two roundings
# (gcc's default under -std=c11, but not clang's, which would fuse it into
# one FMA: a clang build would then compute other numbers than gcc's).
CFLAGS_ALL = -std=c11 $(OPT) -ffp-contract=off -fno-math-errno -fno-trapping-math $(WARN) -D_POSIX_C_SOURCE=200809L -MMD -MP \
    $(ARCH_FLAGS) \
    $(if $(HAVE_OPENMP),-fopenmp) \
    $(if $(filter 1,$(NO_BLAS)),-DNO_BLAS,$(BLAS_CFLAGS)) \
    $(if $(filter 1 thread fuzz,$(SAN)),$(SANFLAGS)) \
    -Icommon $(CFLAGS)
LDFLAGS_ALL = $(if $(HAVE_OPENMP),-fopenmp) \
    $(if $(filter 1 thread fuzz,$(SAN)),$(SANFLAGS)) $(LDFLAGS)
LIBS_ALL = $(if $(filter 1,$(NO_BLAS)),,$(BLAS_LIBS)) -lm

# chapter N's include path: its own folder and every earlier chapter's
chincludes = $(foreach n,$(CHAPTERS),$(if $(shell [ $(n) -le $(1) ] && echo y),-I$(call chdir,$(n))))

.DEFAULT_GOAL := all
.PHONY: all help deps data clean check grade valgrind docs figures pdf docs-check \
        bench banner FORCE \
        fuzz fuzz-one fuzz-build fuzz-seeds \
        $(PROGRAMS)

# ---- set-up -------------------------------------------------------------------
# Each stamp records that a group of packages was found (or installed).
# They live in the variant's folder: another CC is checked again.
$(OBJ)/.deps-%:
	@mkdir -p $(OBJ)
	@bash common/deps.sh $*
	@touch $@

deps:
	@bash common/deps.sh all
	@mkdir -p $(OBJ) && touch $(OBJ)/.deps-build $(OBJ)/.deps-check \
	    $(OBJ)/.deps-docs $(OBJ)/.deps-data $(OBJ)/.deps-zip

data: data/tinyshakespeare.txt $(MULTI30K)

data/tinyshakespeare.txt: | $(OBJ)/.deps-data
	@bash common/fetch_data.sh tinyshakespeare

# sacreBLEU's numbers for chapter 7's BLEU tests. No public copy: only
# from ../shared/data/bleu/; without it the script says so in one line
# and the tests skip those cases.
BLEU_VECTORS := data/bleu/sacrebleu_2.6.0_vectors.json
data check valgrind: $(BLEU_VECTORS)
$(BLEU_VECTORS): | $(OBJ)/.deps-data
	@bash common/fetch_data.sh bleu
$(MULTI30K): | $(OBJ)/.deps-data
	@bash common/fetch_data.sh multi30k

# GPT-2 small for chapter 9: about 550 MB from Hugging Face at a pinned
# revision, checked by size and sha256; needs the network (nothing in
# make check does). Run again to resume an interrupted download.
gpt2: | $(OBJ)/.deps-data
	@bash common/fetch_data.sh gpt2
.PHONY: gpt2

# (what a student without a GPU needs to know)
GPU_NOT_NEEDED = echo "    chapter 8's exercises and tests run its kernels emulated, no GPU needed"
banner: | $(OBJ)/.deps-build
	@echo "build: $(CC), $(VARIANT) -> $(OBJ)/"
	@$(if $(filter 1,$(NO_BLAS)),echo "  - OpenBLAS off (NO_BLAS=1): naive GEMM",\
	  $(if $(BLAS_LIBS),echo "  + OpenBLAS found: $(BLAS_LIBS)",echo "  - OpenBLAS not found"))
	@$(if $(HAVE_OPENMP),echo "  + OpenMP found",echo "  - OpenMP not found: loops run on one thread")
	@$(if $(filter 1,$(MPI)),echo "  + MPI=1: ./ch6 and ./ch9 are built against Open MPI: mpirun -q -np N ./ch6")
	@$(if $(HAVE_NVCC),$(if $(HAVE_GPU),echo "  + nvcc and a GPU found: ./ch8 builds for the GPU",\
	  echo "  + nvcc found$(comma) but no GPU: ./ch8 builds$(comma) and here only checks its kernels;" && $(GPU_NOT_NEEDED)),\
	  $(if $(HAVE_GPU),echo "  - a GPU$(comma) but no nvcc: no ./ch8 (it needs the CUDA toolkit);" && $(GPU_NOT_NEEDED),\
	  echo "  - no GPU here (and no nvcc$(comma) so no ./ch8):" && $(GPU_NOT_NEEDED)))
	$(if $(CROSS),@echo "  + cross-compiling for $(CROSS): its programs run there (or under qemu)")

# The binaries at the top level are copies of the current variant's, redone
# whenever the variant changes.
$(BUILD)/.variant: FORCE
	@mkdir -p $(BUILD)
	@[ "$$(cat $@ 2>/dev/null)" = "$(VARIANT)" ] || echo "$(VARIANT)" > $@

# ---- the core and the chapters --------------------------------------------------
COMMON_SRC := $(filter-out common/%_test.c,$(wildcard common/*.c))
COMMON_OBJ := $(COMMON_SRC:%.c=$(OBJ)/%.o)
$(OBJ)/libcommon.a: $(COMMON_OBJ)
	@rm -f $@ && $(AR) rcs $@ $^

$(OBJ)/common/%.o: common/%.c | $(OBJ)/.deps-build
	@mkdir -p $(dir $@)
	$(call say,CC $<)$(CC) $(CFLAGS_ALL) -c $< -o $@

define CHAPTER_RULES
# chapter $(1): a library of its layers, and a program from main.c
CH$(1)_SRC := $$(filter-out %/main.c,$$(wildcard $(call chdir,$(1))/*.c))
CH$(1)_OBJ := $$(CH$(1)_SRC:%.c=$$(OBJ)/%.o)
$$(OBJ)/libch$(1).a: $$(CH$(1)_OBJ)
	@rm -f $$@ && $$(AR) rcs $$@ $$^
$$(OBJ)/$(call chdir,$(1))/%.o: $(call chdir,$(1))/%.c | $$(OBJ)/.deps-build
	@mkdir -p $$(dir $$@)
	$$(call say,CC $$<)$$(CC) $$(CFLAGS_ALL) $(call chincludes,$(1)) -c $$< -o $$@
# later chapters first: each library may use the ones before it
# (never chapter 8's: its library is CUDA under the emulation, which the
# CPU chapters after it do not use)
CH$(1)_LIBS = $$(foreach n,$$(filter-out 8,$$(shell seq $(1) -1 1)),$$(if $$(filter $$(n),$$(CHAPTERS)),$$(OBJ)/libch$$(n).a))
$$(OBJ)/ch$(1): $$(OBJ)/$(call chdir,$(1))/main.o $$(CH$(1)_LIBS) $$(OBJ)/libcommon.a
	$$(call say,LINK $$@)$$(CC) $$(LDFLAGS_ALL) $$^ $$(LIBS_ALL) -o $$@
# (MPI=1: ./ch6 and ./ch9, which trains with chapter 6's program, are
# the builds against MPI, $(OBJ)/ch6-mpi and $(OBJ)/ch9-mpi)
CH$(1)_BIN = $$(OBJ)/ch$(1)$$(if $$(and $$(filter 1,$$(MPI)),$$(filter 6 9,$(1))),-mpi)
ch$(1): banner $$(CH$(1)_BIN) $$(if $$(filter $(1),$(DATA_CHAPTERS)),data/tinyshakespeare.txt) $$(if $$(filter $(1),7),$(MULTI30K))
	@cp $$(CH$(1)_BIN) ch$(1).tmp && mv -f ch$(1).tmp ch$(1) && echo "built ./ch$(1)$$(if $$(findstring -mpi,$$(CH$(1)_BIN)), (MPI: mpirun -q -np N ./ch$(1)))"
	$$(if $$(and $$(filter 1,$$(NO_AVX512)),$$(IS_X86)),@echo "  without AVX-512: run it as OPENBLAS_CORETYPE=Haswell ./ch$(1) (OpenBLAS too)")
endef
$(foreach n,$(filter-out 8,$(CHAPTERS)),$(eval $(call CHAPTER_RULES,$(n))))

# ---- chapter 6 across processes (MPI=1) ----------------------------------------------
# chapters/ch6_training/dist.c again, with -DUSE_MPI and mpicc's flags
# (mpicc --showme: the compiler's own flags stay ours), linked into
# $(OBJ)/ch6-mpi ahead of libch6.a, whose one-process dist.o it replaces.
MPI_CFLAGS = $(call lazy,MPI_CFLAGS,mpicc --showme:compile 2>/dev/null)
MPI_LIBS = $(call lazy,MPI_LIBS,mpicc --showme:link 2>/dev/null)
CH6_DIR := $(call chdir,6)
$(OBJ)/$(CH6_DIR)/dist.mpi.o: $(CH6_DIR)/dist.c | $(OBJ)/.deps-build $(OBJ)/.deps-mpi
	@mkdir -p $(dir $@)
	$(call say,CC $< (MPI))$(CC) $(CFLAGS_ALL) $(MPI_CFLAGS) -DUSE_MPI $(call chincludes,6) -c $< -o $@
$(OBJ)/ch6-mpi: $(OBJ)/$(CH6_DIR)/main.o $(OBJ)/$(CH6_DIR)/dist.mpi.o $(CH6_LIBS) $(OBJ)/libcommon.a
	$(call say,LINK $@)$(CC) $(LDFLAGS_ALL) $^ $(LIBS_ALL) $(MPI_LIBS) -o $@
$(OBJ)/ch9-mpi: $(OBJ)/$(call chdir,9)/main.o $(OBJ)/$(CH6_DIR)/dist.mpi.o $(CH9_LIBS) $(OBJ)/libcommon.a
	$(call say,LINK $@)$(CC) $(LDFLAGS_ALL) $^ $(LIBS_ALL) $(MPI_LIBS) -o $@
# tests/mpi.sh compares checkpoints with it
$(OBJ)/st_compare: tests/mpi/st_compare.c $(OBJ)/libcommon.a | $(OBJ)/.deps-build
	$(call say,LINK $@)$(CC) $(CFLAGS_ALL) $^ $(LIBS_ALL) -o $@

# ---- chapter 8: the GPU --------------------------------------------------------------
# Its kernels (.cu) build twice. For the host, always, under the emulation
# of chapters/ch8_cuda/emu/ (emu.h), into libch8.a, which the tests link:
# every kernel is checked against the CPU without a GPU. With nvcc, when it
# is here, for the GPU (compute capabilities CUDA_ARCH), into ./ch8, which
# also carries the emulated build (every symbol renamed *_emu) for its
# self-check on a machine without a GPU. The checks themselves, kcheck/,
# build with the kernels both ways; the emulation is the host's only.
CH8_DIR := $(call chdir,8)
CXX_EMU := $(if $(filter clang%,$(notdir $(firstword $(CC)))),clang++,$(if $(CROSS),$(CROSS)-g++,g++))
NVCC ?= nvcc
# The compute capabilities ./ch8 is built for: those of the GPUs here
# (nvidia-smi), when this nvcc can build for them; on a machine without
# one, 75 80 90 (a T4, an A100, an H100; the A100's code also runs on
# 8.6 and 8.9). `make ch8 CUDA_ARCH=86` names one. The newest is also
# embedded as PTX, which the driver of a later GPU compiles for it.
# bf16 and the tensor-core attention need 8.0: a 7.5 build has fp32 only.
CUDA_ARCH_HERE = $(call lazy,CUDA_ARCH_HERE,for a in $$(timeout 10 nvidia-smi --query-gpu=compute_cap --format=csv$(comma)noheader 2>/dev/null | tr -d ' .' | sort -un); do $(NVCC) --list-gpu-code 2>/dev/null | grep -qx "sm_$$a" && echo $$a; done)
CUDA_ARCH ?= $(or $(strip $(CUDA_ARCH_HERE)),75 80 90)
CUDA_PTX = $(call lazy,CUDA_PTX,printf '%s\n' $(CUDA_ARCH) | sort -n | tail -n 1)
CUDA_HOME = $(call lazy,CUDA_HOME,dirname $$(dirname $$(command -v $(NVCC))))
CH8_CU := $(wildcard $(CH8_DIR)/*.cu $(CH8_DIR)/kcheck/*.cu)
# (the archives below keep one member of a name: no two of these files
# may share one, wherever they lie)
CH8_SAME_NAME := $(strip $(foreach n,$(sort $(notdir $(CH8_CU))),$(if $(word 2,$(filter %/$(n),$(CH8_CU))),$(n))))
$(if $(CH8_SAME_NAME),$(error chapter 8: .cu files of the same name in two folders, which libch8.a cannot both hold: $(CH8_SAME_NAME)))
CH8_EMU_OBJ := $(CH8_CU:%.cu=$(OBJ)/%.emu.o) $(OBJ)/$(CH8_DIR)/emu/emu.emu.o
CH8_GPU_OBJ := $(CH8_CU:%.cu=$(OBJ)/%.gpu.o)
# the kernel benchmarks (see "benchmarks" below)
KBENCH_SRC := $(wildcard tests/bench/cuda/*.cu)
KBENCH_EMU := $(KBENCH_SRC:%.cu=$(OBJ)/%.emu)
KBENCH_GPU := $(KBENCH_SRC:%.cu=$(OBJ)/%.gpu)
CXXFLAGS_EMU = -std=c++17 $(OPT) -ffp-contract=off -fno-math-errno $(filter-out -Wvla,$(WARN)) -pthread -MMD -MP \
    $(ARCH_FLAGS) \
    $(if $(filter 1 thread,$(SAN)),$(SANFLAGS)) $(if $(filter 1,$(SAN)),-fno-sanitize=null) \
    -Icommon $(call chincludes,8) $(CXXFLAGS)
# (-fno-sanitize=null: UBSan tests the address of a thread_local such as
# threadIdx with the flags of an `add` that the linker may turn into a
# `lea`, which sets none, and so reports a null pointer that is not there;
# AddressSanitizer still stops on a real null dereference)
NVCCFLAGS_ALL = -std=c++17 -O3 $(foreach a,$(CUDA_ARCH),-gencode arch=compute_$(a),code=sm_$(a)) \
    -gencode arch=compute_$(CUDA_PTX),code=compute_$(CUDA_PTX) \
    -Xcompiler -Wall,-Wextra -Icommon $(call chincludes,8) $(NVCCFLAGS)
# What the GPU objects hold: when CUDA_ARCH changes, they are built again.
$(OBJ)/.cuda-arch: FORCE
	@mkdir -p $(OBJ) && a='$(CUDA_ARCH), PTX $(CUDA_PTX)'; \
	    [ "$$(cat $@ 2>/dev/null)" = "$$a" ] || echo "$$a" > $@
CH8_LIBS = -pthread -lstdc++

$(OBJ)/$(CH8_DIR)/%.emu.o: $(CH8_DIR)/%.cu | $(OBJ)/.deps-build
	@mkdir -p $(dir $@)
	$(call say,CXX $< (emulated))$(CXX_EMU) $(CXXFLAGS_EMU) -x c++ -c $< -o $@
$(OBJ)/$(CH8_DIR)/emu/emu.emu.o: $(CH8_DIR)/emu/emu.cpp | $(OBJ)/.deps-build
	@mkdir -p $(dir $@)
	$(call say,CXX $<)$(CXX_EMU) $(CXXFLAGS_EMU) -c $< -o $@
$(OBJ)/libch8.a: $(CH8_EMU_OBJ)
	@rm -f $@ && $(AR) rcs $@ $^
$(OBJ)/$(CH8_DIR)/%.gpu.o: $(CH8_DIR)/%.cu $(OBJ)/.cuda-arch | $(OBJ)/.deps-build
	@mkdir -p $(dir $@)
	$(call say,NVCC $<)$(NVCC) $(NVCCFLAGS_ALL) -M -MT $@ $< -o $(@:.o=.d) && \
	    $(NVCC) $(NVCCFLAGS_ALL) -c $< -o $@
# The emulated objects again, every global symbol renamed NAME_emu, so
# that both builds of each kernel live in one program. The names of the
# COMDAT groups too (what holds an inline function or a template's
# instance, such as a std::vector's destructor, that both builds emit):
# the linker keeps one group of a name, and would drop the emulated one.
$(OBJ)/libch8emu.a: $(CH8_EMU_OBJ)
	@rm -rf $@ $(@:.a=.parts) && mkdir -p $(@:.a=.parts)
	@{ nm --defined-only -g $^ | awk 'NF == 3 { print $$3 }'; \
	   for o in $^; do readelf -gW $$o | sed -n 's/^COMDAT group section .*\[\(.*\)\] contains.*/\1/p'; done; } \
	    | sort -u | awk '{ print $$1, $$1 "_emu" }' > $(@:.a=.parts)/syms
	@for o in $^; do objcopy --redefine-syms=$(@:.a=.parts)/syms $$o $(@:.a=.parts)/$$(basename $$o); done
	@$(AR) rcs $@ $(@:.a=.parts)/*.o
CH8_CPU_LIBS = $(foreach n,6 5 4 3 2 1,$(OBJ)/libch$(n).a)
# The program alone borrows chapter 9's fine-tuning task (./ch8 --gpt2):
# its main.c sees chapter 9's headers and ./ch8 links chapter 9's library
# (and chapter 7's, which chapter 9's tokenizer uses); no kernel does.
$(OBJ)/$(CH8_DIR)/main.o: $(CH8_DIR)/main.c | $(OBJ)/.deps-build
	@mkdir -p $(dir $@)
	$(call say,CC $<)$(CC) $(CFLAGS_ALL) $(call chincludes,9) -c $< -o $@
$(OBJ)/ch8: $(OBJ)/$(CH8_DIR)/main.o $(CH8_GPU_OBJ) $(OBJ)/libch8emu.a $(CH9_LIBS) $(OBJ)/libcommon.a
	$(call say,LINK $@)$(CC) $(LDFLAGS_ALL) $^ -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 \
	    -lcublas -lcudart -ldl $(CH8_LIBS) $(LIBS_ALL) -o $@
ifeq ($(HAVE_NVCC),1)
ch8: banner $(OBJ)/ch8 data/tinyshakespeare.txt
	@cp $(OBJ)/ch8 ch8.tmp && mv -f ch8.tmp ch8 && echo "built ./ch8 (CUDA, for compute capabilities $(CUDA_ARCH), PTX for $(CUDA_PTX))"
else
ch8: banner
	@echo "ch8: nvcc not found, so ./ch8 is not built: install the CUDA toolkit (Debian: nvidia-cuda-toolkit); make check tests its kernels without it"
endif
# No local memory (a stack frame, spilled registers) in the fused
# attention's kernels, by ptxas's report for each of CUDA_ARCH
# (tests/ptxas_check.sh; PTXAS_FILES=--all: every kernel of chapter 8).
# Without nvcc it says so and passes. CI runs it.
check-ptxas:
	@NVCC='$(NVCC)' bash tests/ptxas_check.sh '$(CUDA_ARCH)' $(PTXAS_FILES)
.PHONY: check-ptxas

all: $(PROGRAMS)

# ---- tests and grading ------------------------------------------------------------
# One runner holds every suite: the core's, each chapter's, and the
# exercise suites linked against the folder $(EXERCISES). Make cannot name
# files whose paths hold a space: such a folder is only ever graded through
# a copy (tests/grade.sh), and EX_DIR stands in for it here.
EX_DIR := $(if $(filter 1,$(words $(EXERCISES))),$(EXERCISES),.no-such-folder)
EXKEY := $(subst /,_,$(patsubst /%,%,$(abspath $(EX_DIR))))
EXOBJ := $(OBJ)/ex/$(EXKEY)
# (chapter 8's exercises are CUDA: .cu files, built under the emulation)
EX_SRC := $(foreach n,$(CHAPTERS),$(wildcard $(EX_DIR)/ch$(n)/*.c $(EX_DIR)/ch$(n)/*.cu))
EX_OBJ := $(foreach f,$(EX_SRC),$(EXOBJ)/$(notdir $(patsubst %/,%,$(dir $(f))))/$(basename $(notdir $(f))).o)
TEST_SRC := $(wildcard tests/*.c) $(foreach n,$(CHAPTERS),$(wildcard tests/ch$(n)/*.c))
TEST_OBJ := $(TEST_SRC:%.c=$(OBJ)/%.o)
ALL_CH_LIBS = $(foreach n,$(shell seq $(words $(CHAPTERS)) -1 1),$(OBJ)/libch$(n).a)
RUNNER := $(EXOBJ)/run_tests
GRADER := $(OBJ)/grade_nocode
ALL_INCLUDES := $(foreach d,$(CHAPTER_DIRS),-I$(d)) -Itests
# student code: their warnings are theirs, not errors
EX_WARN := $(if $(filter solutions,$(EXERCISES)),,-Wno-error) -Wno-unused-parameter

$(OBJ)/tests/%.o: tests/%.c | $(OBJ)/.deps-check
	@mkdir -p $(dir $@)
	$(call say,CC $<)$(CC) $(CFLAGS_ALL) $(CHECK_CFLAGS) $(ALL_INCLUDES) -c $< -o $@

# The compiler's messages also go to X.o.log, where tests/grade.sh finds
# those of one file.
$(EXOBJ)/%.o: $(EX_DIR)/%.c | $(OBJ)/.deps-check
	@mkdir -p $(dir $@)
	$(call say,CC $<)$(CC) $(CFLAGS_ALL) $(EX_WARN) -fdiagnostics-color=never $(ALL_INCLUDES) -c $< -o $@ 2> $@.log; \
	    rc=$$?; cat $@.log >&2; [ $$rc = 0 ] || rm -f $@; exit $$rc
$(EXOBJ)/%.o: $(EX_DIR)/%.cu | $(OBJ)/.deps-check
	@mkdir -p $(dir $@)
	$(call say,CXX $< (emulated))$(CXX_EMU) $(CXXFLAGS_EMU) $(EX_WARN) -fdiagnostics-color=never $(ALL_INCLUDES) -x c++ -c $< -o $@ 2> $@.log; \
	    rc=$$?; cat $@.log >&2; [ $$rc = 0 ] || rm -f $@; exit $$rc

# tests/alloc_count.c counts our code's allocations through these wrappers
WRAP_ALLOC := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=aligned_alloc,--wrap=free
$(RUNNER): $(TEST_OBJ) $(EX_OBJ) $(ALL_CH_LIBS) $(OBJ)/libcommon.a
	$(call say,LINK $@)$(CC) $(LDFLAGS_ALL) $(WRAP_ALLOC) $^ $(CHECK_LIBS) $(LIBS_ALL) $(CH8_LIBS) -o $@

$(GRADER): tests/grade.c tests/exercises.def $(OBJ)/libcommon.a | $(OBJ)/.deps-check
	$(call say,LINK $@)$(CC) $(CFLAGS_ALL) -DGRADE_NO_SUITES $(CHECK_CFLAGS) $(ALL_INCLUDES) \
	    tests/grade.c $(OBJ)/libcommon.a $(CHECK_LIBS) $(LIBS_ALL) -o $@

runner: $(RUNNER)
# for tests/grade.sh: what the runner needs besides the exercises (the
# chapters' libraries and the tests, which a first grading builds), the
# exercise objects alone (with -k: each file on its own), and where the
# runner and the objects are
grade-libs: $(TEST_OBJ) $(ALL_CH_LIBS) $(OBJ)/libcommon.a
grade-objs: $(EX_OBJ)
grade-paths:
	@echo "$(RUNNER) $(EXOBJ)"
.PHONY: runner grade-libs grade-objs grade-paths

# tests/faults.sh's helper, which signals a run at a chosen moment of a save
$(OBJ)/killwatch: tests/faults/killwatch.c | $(OBJ)/.deps-build
	$(call say,LINK $@)$(CC) $(CFLAGS_ALL) $< -o $@
# tests/memory.sh's, which measures a run's peak resident memory
$(OBJ)/peak: tests/memory/peak.c | $(OBJ)/.deps-build
	$(call say,LINK $@)$(CC) $(CFLAGS_ALL) $< -o $@
# and its GPT-2 of random weights for ./ch9, of any shape
$(OBJ)/tests/memory/gpt2_random.o: tests/memory/gpt2_random.c | $(OBJ)/.deps-build
	@mkdir -p $(dir $@)
	$(call say,CC $<)$(CC) $(CFLAGS_ALL) $(call chincludes,9) -c $< -o $@
$(OBJ)/gpt2_random: $(OBJ)/tests/memory/gpt2_random.o $(CH9_LIBS) $(OBJ)/libcommon.a
	$(call say,LINK $@)$(CC) $(LDFLAGS_ALL) $(filter %.o %.a,$^) $(LIBS_ALL) -o $@

# The faults of tests/faults.sh in full (make check runs a few of each):
# 24 kills of ./ch6 and 8 of ./ch7 at chosen moments, a full disk, Ctrl-C.
faults: data/tinyshakespeare.txt $(MULTI30K) $(OBJ)/ch5 $(OBJ)/ch6 $(OBJ)/ch7 $(OBJ)/killwatch
	bash tests/faults.sh --full $(OBJ)
.PHONY: faults

# Chapters 6 and 9 on two processes (tests/mpi.sh, about a minute): `make check
# MPI=1` runs it after the rest, `make check-mpi` alone.
MPI_TEST_DEPS := data/tinyshakespeare.txt $(OBJ)/ch5 $(OBJ)/ch6 $(OBJ)/ch6-mpi $(OBJ)/ch9 $(OBJ)/ch9-mpi $(OBJ)/st_compare
check-mpi: banner $(MPI_TEST_DEPS)
	bash tests/mpi.sh $(OBJ)
.PHONY: check-mpi

# The memory estimates against the measured peaks alone (tests/memory.sh,
# about 30 seconds); `make check-memory TABLE=1` prints the README's table.
check-memory: banner data/tinyshakespeare.txt $(MULTI30K) $(addprefix $(OBJ)/ch,$(filter-out 8,$(CHAPTERS))) $(OBJ)/peak $(OBJ)/gpt2_random
	bash tests/memory.sh $(if $(filter 1,$(TABLE)),--table) $(OBJ)
.PHONY: check-memory

# where `make check EXERCISES=DIR` writes results.json and its work files
GRADE_OUT ?= $(BUILD)/grade
# $(EXERCISES) inside '...' in a shell command
shq = $(subst ','\'',$(1))

ifeq ($(EXERCISES),solutions)
# First the book against the code, in a second and without pandoc
# (tests/docs_sync_test.sh): every listing's code and link in the
# chapters' Markdown, every table of exercises against the grader's
# tests. The whole suite with the reference answers: must pass. Then the tests of
# the grader itself, which grade broken copies of solutions/, those of
# Gradescope's autograder and of grade-all (tests/test_gradescope.sh), the
# programs' command lines (tests/cli/test_cli.sh, a few seconds), their
# catalogue of bad inputs (tests/bad_inputs.sh, about 20 seconds), their
# memory estimates against the peaks they reach (tests/memory.sh, about 30
# seconds), and the
# checks of chapter 8's kernel benchmarks, emulated at small sizes (a few
# seconds; each prints its table when a version fails).
CLI_PROGRAMS := $(addprefix $(OBJ)/ch,$(filter-out $(if $(HAVE_NVCC),,8),$(CHAPTERS)))
check: banner data/tinyshakespeare.txt $(MULTI30K) $(RUNNER) $(GRADER) $(CLI_PROGRAMS) $(KBENCH_EMU) $(OBJ)/killwatch $(OBJ)/peak $(OBJ)/gpt2_random \
    $(if $(filter 1,$(MPI)),$(MPI_TEST_DEPS))
	@bash tests/docs_sync_test.sh
	@mkdir -p '$(call shq,$(GRADE_OUT))'
	$(RUNNER) --json '$(call shq,$(GRADE_OUT))/results.json'
	@MAKE='$(MAKE)' bash tests/test_grade.sh $(OBJ)
	@MAKE='$(MAKE)' bash tests/test_gradescope.sh $(OBJ)
	bash tests/cli/test_cli.sh $(OBJ)
	bash tests/bad_inputs.sh $(OBJ)
	bash tests/memory.sh $(OBJ)
	bash tests/faults.sh $(OBJ)
	@for b in $(KBENCH_EMU); do \
	    if $$b --small > $$b.log 2>&1; then echo "kernel benchmark $$(basename $$b .emu) --small, emulated: $$(tail -n 1 $$b.log)"; \
	    else cat $$b.log; echo "FAILED: $$b --small (emulated)"; exit 1; fi; done
	$(if $(filter 1,$(MPI)),bash tests/mpi.sh $(OBJ))
else
# Grading another folder: always writes a report, even when it does not build.
check: grade
endif

# The Check suites alone, with solutions/: the first part of make check,
# without the grader's, the command lines' and the faults' tests, which
# are most of its time. For a quick loop while working on a chapter
# (CK_RUN_SUITE=ch4 and the like work here too).
check-unit: banner data/tinyshakespeare.txt $(MULTI30K) $(BLEU_VECTORS) $(RUNNER)
	$(RUNNER)
.PHONY: check-unit

# Each exercise file is compiled on its own; one that is absent or does not
# compile is graded as its stub, from tests/stubs.manifest, never from
# exercises/ (see tests/grade.sh).
grade: banner data/tinyshakespeare.txt $(GRADER)
	@MAKE='$(MAKE)' GRADER='$(GRADER)' \
	    bash tests/grade.sh '$(call shq,$(EXERCISES))' '$(GRADE_OUT)'

# The stubs as the course gives them (tests/stubs.manifest), whatever
# exercises/ holds now: into build/stubs/, laid out as exercises/ is. What
# needs the stubs takes them from such a copy, never from exercises/, which
# is the student's (see tests/stubs.sh). After changing a stub, write the
# manifest anew: make stubs-manifest (CI fails until it matches).
STUBS ?= $(BUILD)/stubs
stubs:
	@bash tests/stubs.sh '$(call shq,$(STUBS))' \
	    && echo "wrote the stubs of exercises/ into $(STUBS)/"
stubs-manifest:
	@bash tests/stubs.sh --write
.PHONY: stubs stubs-manifest

# Gradescope's autograder: build/gradescope/autograder.zip, which setup.sh
# and run_autograder (tests/gradescope/) grade with, as above; never with
# solutions/ inside.
GRADESCOPE_ZIP ?= $(BUILD)/gradescope/autograder.zip
gradescope: data/tinyshakespeare.txt $(BLEU_VECTORS) | $(OBJ)/.deps-zip
	@bash tests/gradescope/make_zip.sh $(GRADESCOPE_ZIP)

# Every student's folder under DIR (one a student), each as above, into
# build/grade-all/<student>/ and build/grade-all/summary.csv; DIR is only
# read (see tests/grade_all.sh).
GRADE_ALL_OUT ?= $(BUILD)/grade-all
grade-all: banner data/tinyshakespeare.txt $(BLEU_VECTORS) $(GRADER)
	@[ -n '$(call shq,$(DIR))' ] || { echo "error: make grade-all needs" \
	    "DIR=FOLDER, the folder that holds one folder a student" >&2; exit 2; }
	@MAKE='$(MAKE)' GRADER='$(GRADER)' bash tests/grade_all.sh \
	    '$(call shq,$(DIR))' '$(GRADE_ALL_OUT)'
.PHONY: gradescope grade-all

# (Chapter 8's GPT-2 suite, whole emulated fine-tuning runs, is left
# out: minutes under valgrind, and make check runs it, as does SAN=1.)
valgrind: data/tinyshakespeare.txt $(MULTI30K)
	@$(MAKE) --no-print-directory runner PORTABLE=1
	@command -v valgrind >/dev/null || bash common/deps.sh valgrind
	CK_FORK=no SKIP_SUITES=ch8_gpt2_suite OPENBLAS_NUM_THREADS=1 $(if $(IS_X86),OPENBLAS_CORETYPE=Haswell )\
	  valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite \
	  $(BUILD)/$(notdir $(firstword $(CC)))-portable/ex/$(EXKEY)/run_tests

# Chapter 8's kernels under ThreadSanitizer: the emulation runs a block's
# threads as host threads, so a missing __syncthreads is a data race.
# (No OpenMP and no OpenBLAS threads in this build: only ours are watched.)
# The kernel benchmarks' versions are checked there too (--validate-only,
# blocks of up to 256 threads: each thread is a host thread there).
# Only the kernels' test case: the trainer's test runs the same kernels
# for minutes there (a thread per GPU thread), and runs in `make check`.
# Its timeouts are stretched 5 times: under ThreadSanitizer the 48 rows
# take about 2 minutes on an idle 2-core machine, the whole-model ones
# the most, and a busy machine once pushed one past the 60 s of make check.
check-tsan: data/tinyshakespeare.txt
	@$(MAKE) --no-print-directory runner kbench-emu SAN=thread NO_BLAS=1
	CK_RUN_SUITE=ch8 CK_RUN_CASE=kernels CK_TIMEOUT_MULTIPLIER=5 TSAN_OPTIONS=halt_on_error=1 \
	  $(BUILD)/$(notdir $(firstword $(CC)))-tsan-noblas/ex/$(EXKEY)/run_tests
	@for b in $(KBENCH_SRC:%.cu=$(BUILD)/$(notdir $(firstword $(CC)))-tsan-noblas/%.emu); do \
	    TSAN_OPTIONS=halt_on_error=1 $$b --small --validate-only --max-block 256 > $$b.log 2>&1 \
	    && echo "kernel benchmark $$(basename $$b .emu) under ThreadSanitizer: $$(tail -n 1 $$b.log)" \
	    || { cat $$b.log; echo "FAILED: $$b --small --validate-only --max-block 256"; exit 1; }; done
.PHONY: check-tsan

# ---- arm64, under emulation ------------------------------------------------------------
# The whole project cross-built for arm64 by Debian's aarch64-linux-gnu-gcc
# against the arm64 builds of OpenBLAS and Check (Debian's multiarch; the
# packages are installed like the others, see common/deps.sh), into
# build/aarch64-linux-gnu-gcc/, and run here under qemu-aarch64-static:
# every Check suite and the grade table, ./ch1 .. ./ch7 against this
# machine's programs, chapter 6's losses step by step (tests/arm64.sh).
# Not part of make check, nor of CI, whose time it would not fit.
# Correctness only: under emulation a time says nothing of arm64's speed.
check-arm64: data/tinyshakespeare.txt $(MULTI30K) $(BLEU_VECTORS) \
    $(addprefix $(OBJ)/ch,1 2 3 4 5 6 7)
	@MAKE='$(MAKE)' bash tests/arm64.sh $(OBJ)
.PHONY: check-arm64

# ---- fuzzing -------------------------------------------------------------------------
# libFuzzer harnesses (tests/fuzz/TARGET.c) for every parser of input from
# outside: each runs FUZZ_SECONDS on a copy of its seed corpus
# (tests/fuzz/corpus/TARGET/) with its dictionary (tests/fuzz/TARGET.dict)
# and fails on a crash, a leak, a hang or an allocation past the limits
# of tests/fuzz/run.sh; the input that did it is left in build/fuzz/TARGET/.
# They build in their own variant, SAN=fuzz, which needs clang: make fuzz
# picks clang itself.
FUZZ_TARGETS := json safetensors checkpoint train_state utf8 flags bpe bleu seq2seq
FUZZ_SECONDS ?= 30
# targets fuzzed at once, one core each
FUZZ_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
FUZZ_LIBS = $(foreach n,7 6 5 4 3 2 1,$(OBJ)/libch$(n).a) $(OBJ)/libcommon.a
FUZZ_BINS := $(addprefix $(OBJ)/fuzz/,$(FUZZ_TARGETS))
# clang, unless CC names another clang
FUZZ_CC := $(if $(filter clang%,$(notdir $(firstword $(CC)))),$(CC),clang)

$(OBJ)/tests/fuzz/%.o: tests/fuzz/%.c | $(OBJ)/.deps-fuzz
	@mkdir -p $(dir $@)
	$(call say,CC $<)$(CC) $(CFLAGS_ALL) $(ALL_INCLUDES) -c $< -o $@
$(OBJ)/fuzz/%: $(OBJ)/tests/fuzz/%.o $(FUZZ_LIBS)
	@mkdir -p $(dir $@)
	$(call say,LINK $@)$(CC) $(LDFLAGS_ALL) -fsanitize=fuzzer,address,undefined $^ $(LIBS_ALL) -o $@

.SECONDARY: $(FUZZ_TARGETS:%=$(OBJ)/tests/fuzz/%.o)
# The seeds of the corpora that are model files and tokenizers, written by
# the project's own writers (tests/fuzz/make_seeds.c); they are committed.
$(OBJ)/fuzz/make_seeds: $(OBJ)/tests/fuzz/make_seeds.o $(FUZZ_LIBS)
	$(call say,LINK $@)$(CC) $(LDFLAGS_ALL) $^ $(LIBS_ALL) -o $@

ifeq ($(SAN),fuzz)
fuzz-build: $(FUZZ_BINS)
fuzz: fuzz-build
	@printf '%s\n' $(FUZZ_TARGETS) | xargs -P $(FUZZ_JOBS) -I{} \
	    bash tests/fuzz/run.sh $(OBJ)/fuzz $(BUILD)/fuzz $(FUZZ_SECONDS) {} \
	    || { echo "fuzz: a target failed (above)"; exit 1; }
fuzz-one: fuzz-build
	@$(if $(filter $(TARGET),$(FUZZ_TARGETS)),,echo "fuzz-one: TARGET must be one of: $(FUZZ_TARGETS)"; exit 2)
	@bash tests/fuzz/run.sh $(OBJ)/fuzz $(BUILD)/fuzz $(FUZZ_SECONDS) $(TARGET)
fuzz-seeds: $(OBJ)/fuzz/make_seeds
	@mkdir -p $(addprefix tests/fuzz/corpus/,checkpoint seq2seq train_state safetensors bpe)
	$(OBJ)/fuzz/make_seeds tests/fuzz/corpus
else
fuzz fuzz-one fuzz-build fuzz-seeds:
	@$(MAKE) --no-print-directory $@ SAN=fuzz CC='$(FUZZ_CC)' \
	    FUZZ_SECONDS='$(FUZZ_SECONDS)' FUZZ_JOBS='$(FUZZ_JOBS)' TARGET='$(TARGET)'
endif

# ---- benchmarks ---------------------------------------------------------------------
# ./ch6 against PyTorch side by side (about 13 minutes; BENCH="--quick" for a
# smoke test); the report names the CPU and its AVX2 / AVX-512 features.
bench:
	bash tests/bench/bench.sh $(BENCH)
# ./ch8 against PyTorch on this machine's GPU (tests/bench/cuda/bench_gpu.py;
# BENCH="--quick" for the small model only, BENCH="--full" adds the whole
# 5000-step nanogpt run on both sides). Needs a GPU, nvcc and PyTorch.
bench-gpu: ch8
	python3 tests/bench/cuda/bench_gpu.py $(BENCH)
.PHONY: bench-gpu
# ./ch6 on 2 MPI ranks against 1 process of 2 threads, and PyTorch's DDP
# the same two ways, on one machine; then what the all-reduce would cost
# across machines (tests/bench/bench_mpi.py, about 3 minutes; BENCH=
# "--quick" for a smoke test). PyTorch is optional (its rows are left out).
bench-mpi: data/tinyshakespeare.txt $(OBJ)/ch6 $(OBJ)/ch6-mpi
	python3 tests/bench/bench_mpi.py --bin $(OBJ) $(BENCH)
.PHONY: bench-mpi
# ./ch7 --task translate against PyTorch (tests/bench/bench_mt.py): training
# tokens/s for 60 steps, then decoding the test set greedy and with beam
# search (BENCH="--checkpoint FILE" decodes a trained model instead; BENCH=
# "--help" lists the rest). Needs PyTorch.
bench-mt: ch7 $(OBJ)/bpe_ids
	python3 tests/bench/bench_mt.py --no-build --bpe-ids $(OBJ)/bpe_ids $(BENCH)
.PHONY: bench-mt

# Chapter 9's tokenizer against tiktoken on one thread (tests/bench/
# tokenizer.py): Tiny Shakespeare and Multi30k encoded by both, the same
# ids checked, the times and their ratio. Needs tiktoken (pip).
$(OBJ)/tok_bench: tests/bench/tok_bench.c $(OBJ)/libch9.a $(OBJ)/libch7.a $(OBJ)/libcommon.a
	$(call say,LINK $@)$(CC) $(CFLAGS_ALL) $(call chincludes,9) $^ $(LIBS_ALL) -o $@
bench-tok: $(OBJ)/tok_bench data/tinyshakespeare.txt $(MULTI30K)
	python3 tests/bench/tokenizer.py --bin $(OBJ)/tok_bench $(BENCH)
.PHONY: bench-tok

# ./ch9 against PyTorch and transformers at GPT-2 small's size, with
# random weights (tests/bench/bench_gpt2.py): generation with the KV
# cache and a fine-tuning step, on 1 and 2 threads (BENCH=--busy: also
# beside a busy process). Needs PyTorch and transformers.
bench-gpt2: ch9 $(OBJ)/gpt2_random $(OBJ)/products $(OBJ)/gemv
	python3 tests/bench/bench_gpt2.py --bin $(OBJ) $(BENCH)
.PHONY: bench-gpt2

# Chapter 8's kernel benchmarks (tests/bench/cuda/*.cu): versions of one
# kernel each, checked against the CPU and timed over block sizes. Each
# builds twice, as the chapter's kernels: with nvcc for the GPU (X.gpu,
# linked with the chapter's GPU objects), which `make bench-kernels` runs
# (BENCH="--repeats 100" and so on); and under the host emulation (X.emu,
# linked with libch8.a), whose checks `make check` runs at small sizes.
$(OBJ)/tests/bench/cuda/%.emu.o: tests/bench/cuda/%.cu | $(OBJ)/.deps-build
	@mkdir -p $(dir $@)
	$(call say,CXX $< (emulated))$(CXX_EMU) $(CXXFLAGS_EMU) -x c++ -c $< -o $@
$(OBJ)/tests/bench/cuda/%.emu: $(OBJ)/tests/bench/cuda/%.emu.o $(OBJ)/libch8.a $(CH8_CPU_LIBS) $(OBJ)/libcommon.a
	$(call say,LINK $@)$(CXX_EMU) $(LDFLAGS_ALL) $^ $(CH8_LIBS) $(LIBS_ALL) -o $@
$(OBJ)/tests/bench/cuda/%.gpu.o: tests/bench/cuda/%.cu $(OBJ)/.cuda-arch | $(OBJ)/.deps-build
	@mkdir -p $(dir $@)
	$(call say,NVCC $<)$(NVCC) $(NVCCFLAGS_ALL) -M -MT $@ $< -o $(@:.o=.d) && \
	    $(NVCC) $(NVCCFLAGS_ALL) -c $< -o $@
$(OBJ)/libch8gpu.a: $(CH8_GPU_OBJ)
	@rm -f $@ && $(AR) rcs $@ $^
$(OBJ)/tests/bench/cuda/%.gpu: $(OBJ)/tests/bench/cuda/%.gpu.o $(OBJ)/libch8gpu.a $(CH8_CPU_LIBS) $(OBJ)/libcommon.a
	$(call say,LINK $@)$(CC) $(LDFLAGS_ALL) $^ -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 \
	    -lcublas -lcudart -ldl $(CH8_LIBS) $(LIBS_ALL) -o $@
# (kept: make would delete these objects as intermediates and rebuild them)
.SECONDARY: $(KBENCH_SRC:%.cu=$(OBJ)/%.emu.o) $(KBENCH_SRC:%.cu=$(OBJ)/%.gpu.o)
kbench-emu: $(KBENCH_EMU)
ifeq ($(HAVE_NVCC),1)
bench-kernels: banner $(KBENCH_GPU)
	@for b in $(KBENCH_GPU); do echo; echo "== $$b"; $$b $(BENCH) || exit 1; done
else
bench-kernels: banner
	@echo "bench-kernels: nvcc not found: the kernel benchmarks need the CUDA toolkit and a GPU"; exit 1
endif
.PHONY: bench-kernels kbench-emu

# The floor under a ./ch6 step: its Linear products alone, through gemm()
# (tests/bench/products.c; bench.py runs it beside each config).
$(OBJ)/products: tests/bench/products.c $(OBJ)/libcommon.a
	$(call say,LINK $@)$(CC) $(CFLAGS_ALL) $^ $(LIBS_ALL) -o $@
products: $(OBJ)/products
	@cp $(OBJ)/products build/products
.PHONY: products
# A decoding step's one-row products: gemv_rows, OpenBLAS's sgemv and a
# plain read of the same weights (tests/bench/gemv.c; bench_gpt2.py runs it)
$(OBJ)/gemv: tests/bench/gemv.c $(OBJ)/libcommon.a
	$(call say,LINK $@)$(CC) $(CFLAGS_ALL) $^ $(LIBS_ALL) -o $@

# The numbers of chapter 7's text about subwords (tests/bench/bpe_stats.c).
$(OBJ)/bpe_stats: tests/bench/bpe_stats.c $(OBJ)/libch7.a $(OBJ)/libcommon.a
	$(call say,LINK $@)$(CC) $(CFLAGS_ALL) $(call chincludes,7) $^ $(LIBS_ALL) -o $@
bpe-stats: $(OBJ)/bpe_stats $(MULTI30K)
	$(OBJ)/bpe_stats
.PHONY: bpe-stats
# The ids of the same tokenizer for every line of some files
# (tests/bench/bpe_ids.c), which bench-mt compares with PyTorch's side.
$(OBJ)/bpe_ids: tests/bench/bpe_ids.c $(OBJ)/libch7.a $(OBJ)/libcommon.a
	$(call say,LINK $@)$(CC) $(CFLAGS_ALL) $(call chincludes,7) $^ $(LIBS_ALL) -o $@

# ---- docs ----------------------------------------------------------------------------
# The book's figures are drawn at build time from the programs' own output
# and never committed: each program writes the numbers it shows into
# build/figures-data/chN*/ (--plot-data DIR, or a --log CSV), and the
# gnuplot scripts docs/figures/chN_*.gp draw them as
# docs/site/figures/chN_*.svg. The settings are short and fixed, on one
# thread, so two builds give the same files, but for the times measured
# (ch2's and ch3's timings, ch5's generation speed, ch6's profile): those
# are the building machine's and differ run to run. Each figure's caption
# in its chapter quotes the command below that made its data: change both.
FIGDATA := $(BUILD)/figures-data
FIGENV := OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
# (each command is also kept in a .cmd file, where docs/build.sh checks that
# the captions quote it exactly)
# (the line shown is the .cmd file's: a command may hold quotes)
fig_run = $(Q)echo '$(1)' > $(FIGDATA)/$(2).cmd && \
    $(if $(filter 1,$(V)),,sed 's/^/  FIGURE DATA /' $(FIGDATA)/$(2).cmd && )\
    $(FIGENV) $(1) > $(FIGDATA)/$(2).out
figures: ch1 ch2 ch3 ch4 ch5 ch6 ch7 | $(OBJ)/.deps-docs
	@rm -rf $(FIGDATA) docs/site/figures && mkdir -p $(FIGDATA)/ch6 $(FIGDATA)/ch7 docs/site/figures
	$(call fig_run,./ch1 --plot-data $(FIGDATA)/ch1,ch1)
	$(call fig_run,./ch2 --T 18 --max-T 512 --plot-data $(FIGDATA)/ch2,ch2)
	$(call fig_run,./ch3 --max-T 512 --plot-data $(FIGDATA)/ch3,ch3)
	$(call fig_run,./ch4 --plot-data $(FIGDATA)/ch4,ch4)
	$(call fig_run,./ch5 --block 64 --embd 64 --tokens 0 --plot-data $(FIGDATA)/ch5,ch5)
	$(call fig_run,./ch5 --plot-data $(FIGDATA)/ch5_default,ch5_default)
	$(call fig_run,./ch6 --layers 2 --heads 2 --embd 48 --block 64 --batch 16 --steps 400 --warmup 40 --eval-every 20 --eval-iters 8 --threads 1 --sample-chars 0 --quiet --log $(FIGDATA)/ch6/log.csv --profile --plot-data $(FIGDATA)/ch6,ch6)
	$(call fig_run,./ch7 --threads 1 --quiet --plot-data $(FIGDATA)/ch7,ch7)
	$(call fig_run,./ch7 --task translate --threads 1 --quiet --embd 96 --layers 1 --heads 4 --ffn 384 --merges 2000 --batch-tokens 4000 --steps 1000 --warmup 100 --lr 5e-3 --eval-every 100 --show 0 --beam 1 --log $(FIGDATA)/ch7/translate.csv --save $(FIGDATA)/ch7/translate.safetensors,ch7_translate)
	$(call fig_run,./ch7 --checkpoint $(FIGDATA)/ch7/translate.safetensors --translate "Eine Frau nimmt mit ihrer Kamera ein Foto auf." --plot-data $(FIGDATA)/ch7,ch7_translation_attention)
	@# (a warning fails the figure too: a data file gnuplot cannot read
	@# is only a warning to it, and the figure would be drawn empty)
	@for gp in docs/figures/ch*.gp; do \
	    echo "  GNUPLOT $$gp"; \
	    gnuplot -e "data='$(FIGDATA)'; out='docs/site/figures'" $$gp 2> $(FIGDATA)/gnuplot.err; \
	    rc=$$?; cat $(FIGDATA)/gnuplot.err >&2; \
	    [ $$rc = 0 ] && [ ! -s $(FIGDATA)/gnuplot.err ] \
	        || { echo "figures: error: gnuplot failed or warned on $$gp" >&2; exit 1; }; \
	done

docs: figures | $(OBJ)/.deps-docs
	@bash docs/build.sh

# The code of each listing in the chapters' Markdown, and the link above
# it to its lines, written from the sources as they are now (after
# changing code that a chapter shows); the tables of exercises written
# from what the grader runs (after changing a test or the points). The
# docs build and make check fail while either is out of date.
listings:
	@bash docs/code_listings.sh --write
exercise-tables:
	@bash docs/exercise_tables.sh --write
.PHONY: listings exercise-tables

# The book as one PDF, printed by headless Chromium (no LaTeX).
pdf: docs | $(OBJ)/.deps-pdf
	@bash docs/pdf.sh

# Every page of the site in headless Chromium: broken links, images that
# did not load, empty code blocks, unrendered math, console errors. First
# the checker's own test (small broken sites it must fail on), then the
# real site, with a screenshot of each page at two widths.
docs-check: docs | $(OBJ)/.deps-docs-check
	@bash tests/docs_check_test.sh
	@rm -rf $(BUILD)/docs-check
	@python3 docs/check_site.py --shots $(BUILD)/docs-check docs/site

# ---- housekeeping ---------------------------------------------------------------------
clean:
	rm -rf $(BUILD) docs/site $(addprefix ch,1 2 3 4 5 6 7 8)

help:
	@echo "Transformer from scratch in C. Targets:"
	@echo "  make chN            build ./chN for chapter N (here: $(CHAPTERS))"
	@echo "  make all            build every chapter program"
	@echo "  make check          run every test (core, chapters, exercises with solutions/,"
	@echo "                      the programs' command lines)"
	@echo "  make check-unit     only the Check suites (make check's first part;"
	@echo "                      CK_RUN_SUITE=ch4 make check-unit: one suite)"
	@echo "  make check EXERCISES=DIR   grade DIR: score table + build/grade/results.json"
	@echo "                      (your own answers: make check EXERCISES=exercises)"
	@echo "  CK_RUN_CASE=ex1.2 make check EXERCISES=DIR   grade one exercise (1.2"
	@echo "                      here): its row alone, results.json left as it was"
	@echo "  make gradescope     Gradescope's autograder: build/gradescope/autograder.zip"
	@echo "  make stubs          the exercises' stubs as the course gives them, whatever"
	@echo "                      exercises/ holds: build/stubs/ (make stubs-manifest:"
	@echo "                      after changing a stub, tests/stubs.manifest anew)"
	@echo "  make grade-all DIR=FOLDER  grade each student's folder in FOLDER:"
	@echo "                      build/grade-all/summary.csv and <student>/results.json"
	@echo "  make check MPI=1    also ./ch6 on 2 MPI ranks against 1 process"
	@echo "                      (make check-mpi: only that)"
	@echo "  make check SAN=1    the tests under AddressSanitizer and UBSan"
	@echo "  make valgrind       the tests under valgrind (CK_FORK=no)"
	@echo "  make check-tsan     chapter 8's kernels, emulated, under ThreadSanitizer"
	@echo "  make check-arm64    the project cross-built for arm64 and run here under"
	@echo "                      qemu: the tests, and the programs against this"
	@echo "                      machine's builds (about 13 minutes; not in make check)"
	@echo "  make faults         kill -9, a full disk and Ctrl-C against training runs"
	@echo "  make fuzz           every parser's libFuzzer harness, FUZZ_SECONDS each (30;"
	@echo "                      clang; FUZZ_JOBS at once); make fuzz-one TARGET=json: one"
	@echo "  make bench          ./ch6 against PyTorch on this machine (BENCH=--quick)"
	@echo "  make bench-mpi      ./ch6 on 2 MPI ranks against 2 threads, and PyTorch's DDP"
	@echo "  make bench-gpu      ./ch8 against PyTorch on this machine's GPU"
	@echo "  make bench-mt       ./ch7 translation against PyTorch: training, decoding"
	@echo "  make bench-tok      chapter 9's tokenizer against tiktoken, one thread"
	@echo "  make bench-gpt2     ./ch9 against PyTorch at GPT-2 small's size (random"
	@echo "                      weights): generation and a fine-tuning step"
	@echo "  make bench-kernels  chapter 8's kernels, version by version, over block sizes"
	@echo "                      (tests/bench/cuda/*.cu; needs nvcc and a GPU;"
	@echo "                      BENCH=\"--repeats N\")"
	@echo "  make docs           render the book to docs/site/ (pandoc), with its figures"
	@echo "  make figures        only the figures: the programs' data (build/figures-data/)"
	@echo "                      drawn by gnuplot into docs/site/figures/*.svg"
	@echo "  make listings       write into the chapters' Markdown the code of each listing"
	@echo "                      (and the link to its lines) from the sources as they are"
	@echo "  make exercise-tables  write each chapter's table of exercises from the tests"
	@echo "  make pdf            the whole book as docs/site/book.pdf (headless Chromium)"
	@echo "  make docs-check     open every page of docs/site in headless Chromium: fails"
	@echo "                      on broken links, missing images, empty code, unrendered"
	@echo "                      math, console errors; screenshots in build/docs-check/"
	@echo "  make data           fetch Tiny Shakespeare and Multi30k (and, from ../shared,"
	@echo "                      the BLEU test vectors) into data/"
	@echo "  make gpt2           fetch GPT-2 small (OpenAI's weights, 550 MB) into"
	@echo "                      data/gpt2/ for ./ch9; needs the network; resumes"
	@echo "  make deps           install every Debian package the project uses, except"
	@echo "                      Chromium (make pdf and make docs-check install it)"
	@echo "  make clean          remove build/, docs/site/ and the programs"
	@echo "Knobs: CC=clang  PORTABLE=1 (no $(if $(IS_ARM64),-mcpu,-march)=native)  NO_BLAS=1 (naive GEMM)"
	@echo "       SAN=1  NO_INSTALL=1 (never apt-get)  V=1 (show commands)  OPT=-O2"
	@echo "       CFLAGS=..."
	@echo "       MPI=1 (./ch6 built against Open MPI: mpirun -q -np N ./ch6)"
	@echo "       CUDA_ARCH=\"75 80 90\" (./ch8's compute capabilities; default: this"
	@echo "       machine's GPU, or 75 80 90 without one)"
	@$(if $(IS_X86),,:) echo "       NO_AVX512=1 (build as for a CPU without AVX-512; run with"
	@$(if $(IS_X86),,:) echo "       OPENBLAS_CORETYPE=Haswell)"
	@echo "Missing Debian packages are installed with apt-get (sudo when not root)"
	@echo "by the targets that need them, unless NO_INSTALL=1."

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
