// A loop with two entries: the irreducible control flow of Wu et al. 2012 Fig. 2(d), in a scanner
// of alphanumeric words (one text line per thread).
//
// A word alternates runs of letters and runs of digits ("ab12cd", "7seas", "2024").  The scanner
// has one state per run kind and jumps between them with gotos, so {letters, digits} is a cycle
// that is entered at letters (a word starting with a letter) and at digits (a word starting with
// a digit): neither state dominates the other, the loop is irreducible, and the structurizer
// needs Backward Copy to make it single-entry.  Counted per line: words containing a letter,
// all-digit numbers, letter runs and digit runs.
__device__ __forceinline__ bool is_alpha(unsigned c) { return (c | 32u) - 'a' < 26u || c == '_'; }
__device__ __forceinline__ bool is_digit(unsigned c) { return c - '0' < 10u; }

extern "C" __global__ void multientry(const unsigned char* __restrict__ text,  // [n_lines][width], NUL-padded
                                      int n_lines, int width,
                                      int* __restrict__ counts)                 // [n_lines][4]
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n_lines)
        return;
    const unsigned char* p = text + (size_t)t * width;
    int words = 0, numbers = 0, letter_runs = 0, digit_runs = 0;
    int pos = 0;
    bool saw_letter;

next_word:
    while (pos < width && !is_alpha(p[pos]) && !is_digit(p[pos])) {  // separators
        if (p[pos] == 0)
            goto done;
        ++pos;
    }
    if (pos >= width)
        goto done;
    saw_letter = false;
    if (is_digit(p[pos]))
        goto digits;  // the loop's second entry

letters:
    saw_letter = true;
    ++letter_runs;
    while (++pos < width && is_alpha(p[pos])) {
    }
    if (pos < width && is_digit(p[pos]))
        goto digits;
    goto end_word;

digits:
    ++digit_runs;
    while (++pos < width && is_digit(p[pos])) {
    }
    if (pos < width && is_alpha(p[pos]))
        goto letters;

end_word:
    if (saw_letter)
        ++words;
    else
        ++numbers;
    goto next_word;

done:
    int* out = counts + (size_t)t * 4;
    out[0] = words;
    out[1] = numbers;
    out[2] = letter_runs;
    out[3] = digit_runs;
}
