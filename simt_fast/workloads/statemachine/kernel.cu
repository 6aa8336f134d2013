// A goto-based lexer: one thread tokenises one fixed-width text line (unstructured control flow
// written by hand, as in protocol parsers and scanners).
//
// States: start, identifier, integer, fraction, string (with backslash escapes), and the
// terminal states comment / done.  Every transition is a goto: the states form loops that all
// pass through start and leave from many places (unstructured, though reducible; multientry is
// the irreducible one); which states a lane visits, and how long it stays, depends on its text.  Token kinds counted per line:
//   0 identifiers, 1 integers, 2 decimals, 3 strings, 4 operators, 5 comments, 6 errors
//   (unterminated strings).
#define N_KINDS 7

__device__ __forceinline__ bool is_alpha(unsigned c) { return (c | 32u) - 'a' < 26u || c == '_'; }
__device__ __forceinline__ bool is_digit(unsigned c) { return c - '0' < 10u; }

extern "C" __global__ void statemachine(const unsigned char* __restrict__ text,  // [n_lines][width], NUL-padded
                                        int n_lines, int width,
                                        int* __restrict__ counts)                 // [n_lines][N_KINDS]
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n_lines)
        return;
    const unsigned char* p = text + (size_t)t * width;
    int n_ident = 0, n_int = 0, n_decimal = 0, n_string = 0, n_op = 0, n_comment = 0, n_error = 0;
    int pos = 0;
    unsigned c;

start:
    if (pos >= width)
        goto done;
    c = p[pos];
    if (c == 0)
        goto done;
    ++pos;
    if (c == ' ' || c == '\t')
        goto start;
    if (is_alpha(c))
        goto identifier;
    if (is_digit(c))
        goto integer;
    if (c == '"')
        goto string;
    if (c == '#')
        goto comment;
    ++n_op;
    goto start;

identifier:
    if (pos < width && (is_alpha(p[pos]) || is_digit(p[pos]))) {
        ++pos;
        goto identifier;
    }
    ++n_ident;
    goto start;

integer:
    if (pos < width && is_digit(p[pos])) {
        ++pos;
        goto integer;
    }
    if (pos < width && p[pos] == '.') {
        ++pos;
        goto fraction;
    }
    ++n_int;
    goto start;

fraction:
    if (pos < width && is_digit(p[pos])) {
        ++pos;
        goto fraction;
    }
    ++n_decimal;
    goto start;

string:
    if (pos >= width || p[pos] == 0) {  // the line ends inside the string
        ++n_error;
        goto done;
    }
    if (p[pos] == '\\') {  // an escape consumes the next character, whatever it is
        pos += 2;
        goto string;
    }
    if (p[pos] == '"') {
        ++pos;
        ++n_string;
        goto start;
    }
    ++pos;
    goto string;

comment:  // a comment runs to the end of the line
    ++n_comment;

done:
    int* out = counts + (size_t)t * N_KINDS;
    out[0] = n_ident;
    out[1] = n_int;
    out[2] = n_decimal;
    out[3] = n_string;
    out[4] = n_op;
    out[5] = n_comment;
    out[6] = n_error;
}
