throw new Error('This optional platform package is not installed here.');
