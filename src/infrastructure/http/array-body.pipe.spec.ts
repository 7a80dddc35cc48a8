import { IsInt, IsString, Min } from 'class-validator';
import { DomainError } from '../../domain/shared/domain-error';
import { ArrayBodyPipe } from './array-body.pipe';

class ItemDto {
  @IsString()
  name: string;

  @IsInt()
  @Min(1)
  count: number;
}

const pipe = new ArrayBodyPipe(ItemDto, { min: 1, max: 3 });

function failure(value: unknown): DomainError {
  try {
    pipe.transform(value);
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected the pipe to refuse the body');
}

describe('ArrayBodyPipe', () => {
  it('turns each element into the DTO class', () => {
    const items = pipe.transform([{ name: 'a', count: 1 }]);
    expect(items).toEqual([{ name: 'a', count: 1 }]);
    expect(items[0]).toBeInstanceOf(ItemDto);
  });

  it.each([
    [{ items: [] }, 'Expected array but received object'],
    ['text', 'Expected array but received string'],
    [null, 'Expected array but received null'],
    [undefined, 'Expected array but received no body'],
  ])('refuses %p as malformed_request', (value, message) => {
    expect(failure(value)).toMatchObject({ family: 'bad_request_error', serviceCode: 'malformed_request', message });
  });

  it('refuses too few or too many elements', () => {
    expect(failure([]).message).toContain('1 to 3 elements (received 0)');
    expect(failure([{}, {}, {}, {}]).message).toContain('1 to 3 elements (received 4)');
  });

  it('names every failing field by element, unknown fields included', () => {
    const error = failure([{ name: 'a', count: 0 }, { count: 2, extra: true }, 7]);
    expect(error).toMatchObject({ family: 'invalid_request_error', serviceCode: 'invalid_request' });
    expect(error.message).toContain('[0].count: count must not be less than 1');
    expect(error.message).toContain('[1].name: name must be a string');
    expect(error.message).toContain('[1].extra: unknown field');
    expect(error.message).toContain('[2]: must be an object');
  });

  it('lists at most twenty problems and counts the rest', () => {
    const wide = new ArrayBodyPipe(ItemDto, { min: 1, max: 100 });
    // Three problems per element: 90 in all, 20 listed.
    expect(() => wide.transform(Array.from({ length: 30 }, () => ({})))).toThrow(/\(and 70 more\)$/);
  });

  it('takes elements its fast check passes as they are, and words the others by class-validator', () => {
    const checked: unknown[] = [];
    const fast = new ArrayBodyPipe(ItemDto, { min: 1, max: 3 }, (element) => {
      checked.push(element);
      return typeof element.name === 'string' && element.count === 1;
    });
    const [item] = fast.transform([{ name: 'a', count: 1 }]);
    expect(item).toBeInstanceOf(ItemDto);
    expect(item).toEqual({ name: 'a', count: 1 });
    expect(() => fast.transform([{ name: 'a', count: 1 }, { name: 5, count: 1 }])).toThrow('[1].name: name must be a string');
    expect(checked).toHaveLength(3);
  });
});
